import { randomBytes } from "node:crypto";
import { awsRequest } from "./aws-signed-request.ts";
import type { BrokerCopy, BrokerView } from "./broker-view.ts";

/**
 * SNS + SQS (components-contrib pubsub.aws.snssqs) as the broker holds it: every Dapr topic is
 * an SNS topic, and SNS copies each message to every SQS queue subscribed to it. The view
 * subscribes a queue of its own to each watched topic (created here as the component creates it,
 * CreateTopic being idempotent) and keeps what arrives: the subscribers' queues are not touched.
 * SNS wraps each message for an SQS subscriber in a JSON envelope whose `Message` is what Dapr
 * published, the CloudEvent (https://docs.aws.amazon.com/sns/latest/dg/sns-sqs-as-subscriber.html).
 * Speaks the Query protocol, the one goaws serves.
 */
export async function snsSqsView(options: {
  readonly endpoint: string;
  readonly region: string;
  readonly topics: readonly string[];
}): Promise<BrokerView> {
  const call = async (service: "sns" | "sqs", action: string, params: Record<string, string>) => {
    const response = await awsRequest({ ...options, service, protocol: { query: action }, params });
    if (response.status !== 200) throw new Error(`${service} ${action}: ${response.status} ${response.body}`);
    return response.body;
  };
  const spies = new Map<string, { url: string; copies: BrokerCopy[] }>();
  for (const topic of options.topics) {
    const topicArn = xmlValues(await call("sns", "CreateTopic", { Name: topic }), "TopicArn")[0]!;
    const queue = `spy-${randomBytes(4).toString("hex")}-${topic}`.slice(0, 80);
    const url = xmlValues(await call("sqs", "CreateQueue", { QueueName: queue }), "QueueUrl")[0]!;
    const attributes = await call("sqs", "GetQueueAttributes", {
      QueueUrl: url,
      "AttributeName.1": "QueueArn",
    });
    const queueArn = xmlValues(attributes, "Value")[0]!;
    await call("sns", "Subscribe", { TopicArn: topicArn, Protocol: "sqs", Endpoint: queueArn });
    spies.set(topic, { url, copies: [] });
  }
  return {
    async messages(topic) {
      const spy = spies.get(topic);
      if (spy === undefined) throw new Error(`the SNS view does not watch ${topic}`);
      for (;;) {
        const received = await call("sqs", "ReceiveMessage", {
          QueueUrl: spy.url,
          MaxNumberOfMessages: "10",
        });
        const bodies = xmlValues(received, "Body");
        if (bodies.length === 0) break;
        for (const body of bodies) {
          try {
            const envelope = JSON.parse(body) as { Message?: string };
            spy.copies.push({ cloudEvent: JSON.parse(envelope.Message ?? "") as BrokerCopy["cloudEvent"] });
          } catch {
            // not a CloudEvent: not ours to show
          }
        }
        for (const handle of xmlValues(received, "ReceiptHandle")) {
          await call("sqs", "DeleteMessage", { QueueUrl: spy.url, ReceiptHandle: handle });
        }
      }
      return [...spy.copies];
    },
    async close() {
      // The queues go with the emulator.
    },
  };
}

/** The text of every `<name>` element of an AWS Query-protocol XML answer, entities decoded. */
function xmlValues(xml: string, name: string): string[] {
  return [...xml.matchAll(new RegExp(`<${name}>([\\s\\S]*?)</${name}>`, "g"))].map((match) =>
    match[1]!.replace(/&(#x?[0-9a-fA-F]+|quot|amp|lt|gt|apos);/g, (_, entity: string) => {
      if (entity.startsWith("#x")) return String.fromCodePoint(parseInt(entity.slice(2), 16));
      if (entity.startsWith("#")) return String.fromCodePoint(parseInt(entity.slice(1), 10));
      return { quot: '"', amp: "&", lt: "<", gt: ">", apos: "'" }[entity]!;
    }),
  );
}

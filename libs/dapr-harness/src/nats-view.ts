import { connect } from "@nats-io/transport-node";
import type { BrokerCopy, BrokerView } from "./broker-view.ts";

/**
 * NATS JetStream (components-contrib pubsub.jetstream): a topic is a subject, and a message
 * published into a stream is also delivered to plain NATS subscribers of that subject. So a core
 * subscription per topic copies every message from then on without being a JetStream consumer
 * (nothing is acknowledged or taken from the app's consumers). Open it before the system starts.
 */
export async function natsView(options: {
  readonly url: string;
  readonly topics: readonly string[];
}): Promise<BrokerView> {
  const nc = await connect({ servers: options.url });
  const seen = new Map<string, BrokerCopy[]>();
  for (const topic of options.topics) {
    const copies: BrokerCopy[] = [];
    seen.set(topic, copies);
    nc.subscribe(topic, {
      callback: (error, message) => {
        if (error !== null) return;
        try {
          copies.push({ cloudEvent: message.json<BrokerCopy["cloudEvent"]>() });
        } catch {
          // not a CloudEvent: not ours to show
        }
      },
    });
  }
  // The subscriptions are in place at the server once a round trip has gone through.
  await nc.flush();
  return {
    async messages(topic) {
      const copies = seen.get(topic);
      if (copies === undefined) throw new Error(`the NATS view does not watch ${topic}`);
      return [...copies];
    },
    async close() {
      await nc.close().catch(() => undefined);
    },
  };
}

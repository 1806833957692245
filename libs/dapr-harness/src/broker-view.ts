import { connect as amqpConnect } from "amqplib";
import { Redis } from "ioredis";

/** A message as the broker holds it: the CloudEvent Dapr published. */
export interface BrokerCopy {
  readonly cloudEvent: { readonly id: string } & Readonly<Record<string, unknown>>;
}

/** Reads what the real broker received on a topic, without taking it from the subscribers. */
export interface BrokerView {
  messages(topic: string): Promise<BrokerCopy[]>;
  close(): Promise<void>;
}

/**
 * Redis Streams (components-contrib pubsub.redis): each topic is a stream whose entries carry
 * the CloudEvent in the field `data`; XRANGE reads them without touching any consumer group.
 */
export function redisStreamsView(options: { readonly host: string; readonly port: number }): BrokerView {
  const redis = new Redis({
    host: options.host,
    port: options.port,
    lazyConnect: true,
    maxRetriesPerRequest: 1,
  });
  return {
    async messages(topic) {
      const entries = await redis.xrange(topic, "-", "+");
      return entries.flatMap(([, fields]) => {
        const index = fields.indexOf("data");
        const data = index >= 0 ? fields[index + 1] : undefined;
        if (data === undefined) return [];
        try {
          return [{ cloudEvent: JSON.parse(data) as BrokerCopy["cloudEvent"] }];
        } catch {
          return [];
        }
      });
    },
    async close() {
      redis.disconnect();
    },
  };
}

/**
 * RabbitMQ (components-contrib pubsub.rabbitmq): every topic is a fanout exchange, declared here
 * exactly as the component declares it (durable, not auto-deleted), with an exclusive spy queue
 * bound to it that copies every message published from then on. Declare the view before the
 * system starts, so no message is missed.
 */
export async function rabbitMqView(options: {
  readonly url: string;
  readonly topics: readonly string[];
}): Promise<BrokerView> {
  const connection = await amqpConnect(options.url);
  const channel = await connection.createChannel();
  const seen = new Map<string, BrokerCopy[]>();
  for (const topic of options.topics) {
    await channel.assertExchange(topic, "fanout", { durable: true, autoDelete: false });
    const { queue } = await channel.assertQueue("", { exclusive: true, autoDelete: true });
    await channel.bindQueue(queue, topic, "");
    const copies: BrokerCopy[] = [];
    seen.set(topic, copies);
    await channel.consume(
      queue,
      (message) => {
        if (message === null) return;
        try {
          copies.push({
            cloudEvent: JSON.parse(message.content.toString("utf8")) as BrokerCopy["cloudEvent"],
          });
        } catch {
          // not a CloudEvent: not ours to show
        }
      },
      { noAck: true },
    );
  }
  return {
    async messages(topic) {
      const copies = seen.get(topic);
      if (copies === undefined) throw new Error(`the RabbitMQ view does not watch ${topic}`);
      return [...copies];
    },
    async close() {
      await connection.close().catch(() => undefined);
    },
  };
}

import type { CloudEvent } from "./cloud-event.ts";
import { TimerSet } from "./timers.ts";

/**
 * The message broker behind every stand-in sidecar of a test: topics keep every message (for
 * assertions), and each app id subscribed to a topic is one consumer group, like a Service Bus
 * subscription or a Redis consumer group named after the app id (Dapr's default consumerID):
 * every group gets each message once, and the sidecars of one app id compete for it.
 *
 * Groups are durable: once created they keep collecting messages while no sidecar is attached, and
 * a new group starts from the beginning of the topic (as Dapr's Redis Streams component creates its
 * group at id 0), so a subscriber that starts after the publisher still sees earlier messages.
 * A message whose delivery asks for a retry becomes visible again after `redeliveryDelayMs`, on any
 * sidecar of the group, until `maxDeliveryAttempts`.
 */

export interface BrokerMessage {
  readonly sequence: number;
  readonly pubsubName: string;
  readonly topic: string;
  readonly cloudEvent: CloudEvent;
  /** Publish metadata as the broker keeps it (Service Bus "application properties"). */
  readonly metadata: Readonly<Record<string, string>>;
  readonly publishedAt: Date;
  /** App id of the sidecar that published it. */
  readonly publishedBy: string;
  /** When the message becomes deliverable (ScheduledEnqueueTimeUtc), else the publish time. */
  readonly visibleAt: Date;
  /** Set on copies forwarded to a dead-letter topic. */
  readonly deadLetterOf: { readonly topic: string; readonly appId: string } | undefined;
}

export type PublishedMessage = Omit<BrokerMessage, "sequence">;

/** What a consumer reports after trying a message. */
export type DeliveryDisposition =
  /** Done with it (processed, dropped or dead-lettered). */
  | "ack"
  /**
   * Done with it, but the message is lost: acknowledged without being processed or dead-lettered
   * (daprd 1.16 on an app's 404); it is listed in `undelivered()`.
   */
  | "dropped"
  /** Deliver it again later, counting this attempt. */
  | "retry"
  /** The consumer is shutting down: hand it to another consumer without counting the attempt. */
  | "abandon";

export interface DeliveryAttempt {
  readonly message: BrokerMessage;
  readonly attempt: number;
  readonly isFinalAttempt: boolean;
}

export interface Consumer {
  readonly appId: string;
  readonly sidecarId: string;
  readonly pubsubName: string;
  readonly topic: string;
  deliver(attempt: DeliveryAttempt): Promise<DeliveryDisposition>;
}

export interface UndeliveredMessage {
  readonly message: BrokerMessage;
  readonly appId: string;
  readonly attempts: number;
  /**
   * `attempts-exhausted`: the last attempt failed and the subscription has no dead-letter topic;
   * `dropped-on-404`: the app answered 404, which daprd 1.16 acknowledges and drops without
   * dead-lettering (dapr/dapr v1.16.5 pkg/runtime/subscription/postman/http/http.go).
   */
  readonly reason: "attempts-exhausted" | "dropped-on-404";
}

export interface PubSubBrokerOptions {
  readonly maxDeliveryAttempts: number;
  readonly redeliveryDelayMs: number;
  readonly maxInFlightPerSubscription: number;
  readonly now: () => Date;
}

interface PendingDelivery {
  readonly message: BrokerMessage;
  readonly attempts: number;
  readonly visibleAt: Date;
}

interface ConsumerGroup {
  readonly pubsubName: string;
  readonly topic: string;
  readonly appId: string;
  readonly pending: PendingDelivery[];
  readonly consumers: Consumer[];
  inFlight: number;
  nextConsumer: number;
  wakeUp: symbol | undefined;
}

type MessageListener = (message: BrokerMessage) => void;

export class PubSubBroker {
  private readonly log: BrokerMessage[] = [];
  private readonly groups = new Map<string, ConsumerGroup>();
  private readonly listeners = new Set<MessageListener>();
  private readonly undeliverable: UndeliveredMessage[] = [];
  private readonly timers = new TimerSet();
  private sequence = 0;
  private closed = false;

  constructor(private readonly options: PubSubBrokerOptions) {}

  publish(published: PublishedMessage): BrokerMessage {
    const message: BrokerMessage = { ...published, sequence: ++this.sequence };
    this.log.push(message);
    for (const group of this.groups.values()) {
      if (group.pubsubName === message.pubsubName && group.topic === message.topic) {
        enqueue(group, { message, attempts: 0, visibleAt: message.visibleAt });
        this.pump(group);
      }
    }
    for (const listener of [...this.listeners]) listener(message);
    return message;
  }

  messages(topic: string, pubsubName?: string): BrokerMessage[] {
    return this.log.filter(
      (message) => message.topic === topic && (pubsubName === undefined || message.pubsubName === pubsubName),
    );
  }

  /**
   * Messages given up on after the last attempt without a dead-letter topic to take them, and
   * messages dropped because the app answered 404 (daprd 1.16).
   */
  undelivered(): UndeliveredMessage[] {
    return [...this.undeliverable];
  }

  waitForMessage(
    topic: string,
    predicate: (event: CloudEvent, message: BrokerMessage) => boolean,
    timeoutMs: number,
  ): Promise<CloudEvent> {
    const matches = (message: BrokerMessage): boolean =>
      message.topic === topic && predicate(message.cloudEvent, message);
    const already = this.log.find(matches);
    if (already !== undefined) return Promise.resolve(already.cloudEvent);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners.delete(listener);
        reject(
          new Error(
            `no message on topic "${topic}" matched within ${timeoutMs} ms (${this.messages(topic).length} message(s) published to it)`,
          ),
        );
      }, timeoutMs);
      const listener: MessageListener = (message) => {
        if (!matches(message)) return;
        clearTimeout(timer);
        this.listeners.delete(listener);
        resolve(message.cloudEvent);
      };
      this.listeners.add(listener);
    });
  }

  /** Joins the consumer group of `consumer.appId` for its topic; returns the function that leaves it. */
  attach(consumer: Consumer): () => void {
    const group = this.groupFor(consumer);
    group.consumers.push(consumer);
    this.pump(group);
    return () => {
      const index = group.consumers.indexOf(consumer);
      if (index >= 0) group.consumers.splice(index, 1);
    };
  }

  close(): void {
    this.closed = true;
    this.timers.clearAll();
    for (const group of this.groups.values()) group.wakeUp = undefined;
  }

  private groupFor(consumer: Consumer): ConsumerGroup {
    const key = JSON.stringify([consumer.pubsubName, consumer.topic, consumer.appId]);
    let group = this.groups.get(key);
    if (group === undefined) {
      group = {
        pubsubName: consumer.pubsubName,
        topic: consumer.topic,
        appId: consumer.appId,
        pending: [],
        consumers: [],
        inFlight: 0,
        nextConsumer: 0,
        wakeUp: undefined,
      };
      for (const message of this.messages(consumer.topic, consumer.pubsubName)) {
        enqueue(group, { message, attempts: 0, visibleAt: message.visibleAt });
      }
      this.groups.set(key, group);
    }
    return group;
  }

  private pump(group: ConsumerGroup): void {
    if (this.closed) return;
    const now = this.options.now().getTime();
    while (group.inFlight < this.options.maxInFlightPerSubscription && group.consumers.length > 0) {
      const next = group.pending[0];
      if (next === undefined || next.visibleAt.getTime() > now) break;
      group.pending.shift();
      const consumer = group.consumers[group.nextConsumer++ % group.consumers.length] as Consumer;
      group.inFlight += 1;
      void this.deliver(group, consumer, next);
    }
    this.scheduleWakeUp(group);
  }

  private async deliver(group: ConsumerGroup, consumer: Consumer, pending: PendingDelivery): Promise<void> {
    const attempt = pending.attempts + 1;
    let disposition: DeliveryDisposition;
    try {
      disposition = await consumer.deliver({
        message: pending.message,
        attempt,
        isFinalAttempt: attempt >= this.options.maxDeliveryAttempts,
      });
    } catch {
      disposition = "retry";
    }
    group.inFlight -= 1;
    switch (disposition) {
      case "ack":
        break;
      case "dropped":
        this.undeliverable.push({
          message: pending.message,
          appId: group.appId,
          attempts: attempt,
          reason: "dropped-on-404",
        });
        break;
      case "retry":
        if (attempt >= this.options.maxDeliveryAttempts) {
          this.undeliverable.push({
            message: pending.message,
            appId: group.appId,
            attempts: attempt,
            reason: "attempts-exhausted",
          });
        } else {
          const visibleAt = new Date(this.options.now().getTime() + this.options.redeliveryDelayMs);
          enqueue(group, { message: pending.message, attempts: attempt, visibleAt });
        }
        break;
      case "abandon":
        enqueue(group, { ...pending, visibleAt: this.options.now() });
        break;
      default:
        assertNever(disposition);
    }
    this.pump(group);
  }

  private scheduleWakeUp(group: ConsumerGroup): void {
    if (group.wakeUp !== undefined) this.timers.clear(group.wakeUp);
    group.wakeUp = undefined;
    const next = group.pending[0];
    if (
      next === undefined ||
      group.consumers.length === 0 ||
      group.inFlight >= this.options.maxInFlightPerSubscription
    )
      return;
    group.wakeUp = this.timers.at(next.visibleAt, this.options.now, () => {
      group.wakeUp = undefined;
      this.pump(group);
    });
  }
}

/** Keeps pending deliveries ordered by visibility time, then publish order. */
function enqueue(group: ConsumerGroup, delivery: PendingDelivery): void {
  const at = delivery.visibleAt.getTime();
  let index = group.pending.length;
  while (index > 0) {
    const before = group.pending[index - 1] as PendingDelivery;
    const beforeAt = before.visibleAt.getTime();
    if (beforeAt < at || (beforeAt === at && before.message.sequence <= delivery.message.sequence)) break;
    index -= 1;
  }
  group.pending.splice(index, 0, delivery);
}

function assertNever(value: never): never {
  throw new Error(`unexpected delivery disposition ${JSON.stringify(value)}`);
}

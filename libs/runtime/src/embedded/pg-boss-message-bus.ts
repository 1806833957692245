import type { DatabasePassword } from "@matoolkit/db";
import { toSafeError } from "@matoolkit/domain";
import type PgBoss from "pg-boss";
import { z } from "zod";
import type { Logger } from "../logger.ts";
import { startPgListener } from "../pg-listener.ts";
import { DeliveryDeferredError } from "../ports/index.ts";
import type {
  DeadLetter,
  DeliveryHandler,
  DeliverySettlement,
  MessageBus,
  OutgoingMessage,
  Subscription,
  TakeOnly,
  TransactionalBatchHandler,
  TransactionalSubscription,
} from "../ports/index.ts";
import { busTuningSchema } from "./bus-tuning.ts";
import type { BusTuning } from "./bus-tuning.ts";
import { createBatchedStatement } from "./batched-statement.ts";
import { createDueWakeups } from "./due-wakeups.ts";
import { outgoingMessageSchema } from "./message-envelope.ts";
import type { CheckedMessage } from "./message-envelope.ts";
import { busNotifyChannel, publishMessages } from "./publish-message.ts";
import { startExpiredKeysSweep } from "./expired-keys-sweep.ts";
import type { PublishOutcome } from "./publish-message.ts";
import type { Consumer } from "./queue-consumer.ts";
import { readDeadLetters } from "./read-dead-letters.ts";
import { declareSubscription, registerSubscription, toDelivery } from "./register-subscription.ts";
import { startJobsAgain, takeJobs } from "./take-jobs.ts";
import { startTransactionalConsumer } from "./transactional-consumer.ts";
import { settleDeliveries, type DeliveryTickets, type SettleItem } from "./settle-deliveries.ts";
import type { AnyKysely } from "../any-kysely.ts";

export interface PgBossMessageBusOptions extends BusTuning {
  /** A started pg-boss (shared with the timers); the bus never starts or stops it. */
  readonly boss: PgBoss;
  /** Publishes run in a transaction on this handle (dedupe key + fan-out + NOTIFY). */
  readonly db: AnyKysely;
  /** For the LISTEN connection that wakes consumers as soon as a message is published. */
  readonly connectionString: string;
  readonly password?: DatabasePassword;
  readonly logger: Logger;
}

const dedupeSweepEveryMs = 5 * 60_000;
/** A transactional batch: at least one message, at most what one statement should carry. */
const transactionalBatchSize = z.number().int().min(1).max(1000);
/** TransactionalSubscription.batchesAtOnce: each batch holds a connection of the pool. */
const batchesAtOnceSchema = z.number().int().min(1).max(16).default(1);
/** TransactionalSubscription.commitAsynchronously. */
const commitAsynchronouslySchema = z.boolean().default(false);
/** TransactionalSubscription.only: a property name and the values to take (an empty list would take nothing). */
const takeOnlySchema = z
  .object({
    property: z.string().min(1).max(200),
    values: z.array(z.string().min(1).max(200)).min(1).max(100),
  })
  .strict()
  .optional();
/** Concurrent `publish` calls flushed in one transaction at most (statements stay small). */
const maxPublishGroup = 500;

/**
 * MessageBus on PostgreSQL with pg-boss: one queue per (topic, subscription), a dead-letter queue
 * beside each, durable subscriptions and the duplicate-detection window in `matoolkit_bus`.
 * Delivery is at-least-once: a handler that throws gets the message again (deliveryCount + 1)
 * until MAX_DELIVERY_ATTEMPTS, then it is dead-lettered with its sanitized error.
 *
 * Service Bus semantics worth knowing:
 * - a subscription receives only what is published AFTER it was first registered (by any
 *   process, ever): filters are applied at publish time. A message published to a topic with no
 *   matching subscription is dropped (logged as a warning); once registered, a subscription keeps
 *   collecting messages while none of its consumers run;
 * - dead letters stay about 28 days (pg-boss retention); a message nobody consumes for 14 days
 *   is archived by pg-boss, not dead-lettered (Service Bus would dead-letter it on expiry).
 *
 * Publishing is batched: `publishMany` is one statement whatever its size,
 * and concurrent `publish` calls are group-committed the same way (calls arriving while a flush
 * is in flight go together in the next one; with nothing in flight, the calls of one turn of
 * the event loop go together at its end).
 */
/** The due wake-up target of a queue's transactional consumer with `only` (never a queue name). */
function takerTarget(queue: string): string {
  return `${queue}#taken-in-transaction`;
}

export async function createPgBossMessageBus(options: PgBossMessageBusOptions): Promise<MessageBus> {
  const tuning = busTuningSchema.parse(options);
  const { boss, db, logger } = options;
  const consumers = new Map<string, Set<Consumer>>();
  let stopped = false;

  const listener = await startPgListener({
    connectionString: options.connectionString,
    ...(options.password === undefined ? {} : { password: options.password }),
    channel: busNotifyChannel,
    logger,
    applicationName: "matoolkit-bus-listen",
    onNotification: (queue) => consumers.get(queue)?.forEach((consumer) => consumer.wake()),
    onReconnect: () => consumers.forEach((set) => set.forEach((consumer) => consumer.wake())),
  });
  const sweep = startExpiredKeysSweep({ db, keys: ["dedupe"], intervalMs: dedupeSweepEveryMs, logger });

  const publishContext = { db, dedupeWindowSeconds: tuning.dedupeWindowSeconds };
  // A delayed message a transactional consumer takes (`only`) wakes that consumer alone when due:
  // the queue's fetching consumer leaves it out, and woken it would fetch nothing (issue 29:
  // one empty fetch per retry or poll check published).
  const wakeups = createDueWakeups((target) =>
    (takers.get(target) ?? consumers.get(target))?.forEach((consumer) => consumer.wake()),
  );
  const dueTargets = (message: CheckedMessage, queues: readonly string[]): string[] =>
    queues.map((queue) => {
      const only = takenInTransaction.get(queue);
      const value = only === undefined ? undefined : message.properties[only.property];
      return value !== undefined && only!.values.includes(value) ? takerTarget(queue) : queue;
    });
  const report = (message: CheckedMessage, outcome: PublishOutcome): void => {
    switch (outcome.status) {
      case "published":
        if (message.deliverAt !== undefined)
          wakeups.schedule(dueTargets(message, outcome.queues), message.deliverAt);
        return;
      case "duplicate":
        // Normal after a crash between publish and outbox delete, or a retried publish.
        logger.debug({ messageId: message.id, topic: message.topic }, "duplicate message dropped");
        return;
      case "no_subscription":
        logger.warn(
          { messageId: message.id, topic: message.topic },
          "no subscription matches the message; dropped",
        );
        return;
      default: {
        const unknown: never = outcome;
        throw new Error(`Unknown publish outcome ${JSON.stringify(unknown)}`);
      }
    }
  };
  // The job behind each delivery handed out, for settleDelivery (settle-deliveries.ts). Handlers'
  // ends share statements like publishes do; one idempotency key once per statement.
  const tickets: DeliveryTickets = new WeakMap();
  // Per queue, the messages a transactional consumer of this bus takes (consumeInTransaction
  // with `only`): the queue's fetching consumer here leaves them to it.
  const takenInTransaction = new Map<string, TakeOnly>();
  const leftOut = (queue: string): TakeOnly | undefined => takenInTransaction.get(queue);
  /** Those transactional consumers, by takerTarget(queue): what a due wake-up of their messages wakes. */
  const takers = new Map<string, Set<Consumer>>();
  const settleOne = createBatchedStatement<SettleItem, PublishOutcome[]>({
    maxBatch: maxPublishGroup,
    keyOf: (item) => item.outcome.key,
    many: (items) => settleDeliveries(publishContext, items),
    one: async (item) => (await settleDeliveries(publishContext, [item]))[0]!,
  });
  // Concurrent `publish` calls share one statement; a message the server refuses (a body jsonb
  // cannot hold) fails its own caller only (batched-statement.ts).
  const publishOne = createBatchedStatement<CheckedMessage, PublishOutcome>({
    maxBatch: maxPublishGroup,
    keyOf: (message) => JSON.stringify([message.topic, message.id]),
    many: (messages) => publishMessages(publishContext, messages),
    one: async (message) => (await publishMessages(publishContext, [message]))[0]!,
  });

  /** The bus's own log line for a failed delivery; the error goes on to the queue consumer. */
  const logFailures =
    (subscription: Subscription, handler: DeliveryHandler): DeliveryHandler =>
    async (delivery) => {
      try {
        await handler(delivery);
      } catch (error) {
        if (error instanceof DeliveryDeferredError) {
          // A normal stop (the process is shutting down): the message goes back, nothing failed.
          logger.info(
            { messageId: delivery.id, subscription: subscription.name, reason: "delivery.deferred" },
            `delivery handed back: ${error.message}`,
          );
          throw error;
        }
        const safe = toSafeError(error);
        logger.warn(
          {
            messageId: delivery.id,
            topic: delivery.topic,
            subscription: subscription.name,
            deliveryCount: delivery.deliveryCount,
            reason: safe.reason,
          },
          `delivery failed: ${safe.message}`,
        );
        throw error;
      }
    };

  /** Woken by NOTIFYs of its queue, stopped with the bus. */
  const keep = async (queue: string, consumer: Consumer): Promise<void> => {
    if (stopped) {
      // stop() ran while the subscription was being set up: it must not deliver anything.
      await consumer.stop();
      throw new Error("The message bus is stopped");
    }
    const set = consumers.get(queue) ?? new Set<Consumer>();
    set.add(consumer);
    consumers.set(queue, set);
  };

  return {
    async publish(message: OutgoingMessage) {
      // Checked before joining a group: a malformed message fails its own caller, not the group.
      const checked = outgoingMessageSchema.parse(message);
      report(checked, await publishOne(checked));
    },

    async publishMany(messages: readonly OutgoingMessage[]) {
      const checked = messages.map((message) => outgoingMessageSchema.parse(message));
      if (checked.length === 0) return;
      const outcomes = await publishMessages(publishContext, checked);
      checked.forEach((message, index) => report(message, outcomes[index]!));
    },

    async publishInTransaction(trx: AnyKysely, messages: readonly OutgoingMessage[]) {
      const checked = messages.map((message) => outgoingMessageSchema.parse(message));
      if (checked.length === 0) return;
      // The same one statement, on the caller's transaction: dedupe keys, job rows and the
      // NOTIFY all take effect at its commit (PostgreSQL delivers notifications then), or not at all.
      const outcomes = await publishMessages({ ...publishContext, db: trx }, checked);
      checked.forEach((message, index) => report(message, outcomes[index]!));
    },

    async settleDelivery({ delivery, outcome, messages }: DeliverySettlement) {
      const ticket = tickets.get(delivery);
      if (ticket === undefined) return false;
      if (ticket.state !== "open") throw new Error(`settleDelivery: the delivery is ${ticket.state} already`);
      const checked = messages.map((message) => outgoingMessageSchema.parse(message));
      if (checked.length === 0) throw new Error("settleDelivery: nothing to publish");
      ticket.state = "settling";
      let outcomes: PublishOutcome[];
      try {
        outcomes = await settleOne({ ticket, outcome, messages: checked });
      } catch (error) {
        ticket.state = "open";
        throw error;
      }
      ticket.state = "acknowledged";
      checked.forEach((message, index) => report(message, outcomes[index]!));
      return true;
    },

    async declareSubscription(subscription: Subscription) {
      if (stopped) throw new Error("The message bus is stopped");
      await declareSubscription({ boss, db, tuning, subscription });
    },

    async subscribe(subscription: Subscription, handler: DeliveryHandler) {
      if (stopped) throw new Error("The message bus is stopped");
      const registered = await registerSubscription({
        boss,
        db,
        logger,
        tuning,
        subscription,
        tickets,
        handler: logFailures(subscription, handler),
        leftOut,
      });
      await keep(registered.queue, registered.consumer);
    },

    async consumeInTransaction(
      subscription: TransactionalSubscription,
      handleBatch: TransactionalBatchHandler,
      fallback: DeliveryHandler,
    ) {
      if (stopped) throw new Error("The message bus is stopped");
      const batchSize = transactionalBatchSize.parse(subscription.batchSize);
      const only = takeOnlySchema.parse(subscription.only);
      const batchesAtOnce = batchesAtOnceSchema.parse(subscription.batchesAtOnce);
      const commitAsynchronously = commitAsynchronouslySchema.parse(subscription.commitAsynchronously);
      // The subscription as `subscribe` declares it, and its consumer, which fetches nothing: it
      // runs a failed batch's messages one by one (startJobsAgain), with pg-boss's retries.
      const registered = await registerSubscription({
        boss,
        db,
        logger,
        tuning,
        subscription: { ...subscription, concurrency: batchSize },
        tickets,
        handler: logFailures(subscription, fallback),
        fetches: false,
      });
      const { queue } = registered;
      if (only !== undefined) takenInTransaction.set(queue, only);
      const consumer = startTransactionalConsumer({
        queue,
        batchSize,
        batchesAtOnce,
        pollIntervalMs: tuning.pollingIntervalSeconds * 1000,
        logger,
        handleBatch,
        take: (trx, limit) => takeJobs(trx, queue, limit, { only, commitAsynchronously }),
        toDelivery,
        startAgain: (ids) => startJobsAgain(db, queue, ids),
        fallback: registered.consumer,
      });
      await keep(queue, consumer);
      if (only !== undefined) {
        const target = takerTarget(queue);
        takers.set(target, (takers.get(target) ?? new Set<Consumer>()).add(consumer));
      }
    },

    deadLetters(subscription: Pick<Subscription, "topic" | "name">): Promise<DeadLetter[]> {
      return readDeadLetters(db, subscription);
    },

    async stop() {
      if (stopped) return;
      stopped = true;
      await sweep.stop();
      wakeups.stop();
      await Promise.all(
        [...consumers.values()].flatMap((set) => [...set].map((consumer) => consumer.stop())),
      );
      consumers.clear();
      takers.clear();
      await listener.close();
    },
  };
}

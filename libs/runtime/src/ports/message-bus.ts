import type { Topic } from "@matoolkit/domain";
import type { AnyKysely } from "../any-kysely.ts";

/**
 * Publish/subscribe port. Shaped after what Azure Service Bus (000) and Dapr pub/sub both give:
 * topics, named subscriptions with equality filters on application properties, scheduled
 * delivery, duplicate detection on the message id, at-least-once delivery with a bounded number
 * of attempts, then a dead-letter queue. Services depend on this interface only; the embedded
 * (pg-boss on PostgreSQL) and Dapr adapters implement it.
 */
export interface OutgoingMessage {
  /** Stable id: a second publish of the same id within the dedupe window is dropped. */
  readonly id: string;
  readonly topic: Topic;
  /** JSON body, already in wire format (PascalCase). */
  readonly body: unknown;
  /**
   * Application properties (MessageType, WorkerId) used for routing and filters. A property
   * other than MessageType that a subscription filters on must also be a body field of the same
   * name (WorkerJob.WorkerId is): Dapr delivers the CloudEvent, and routes on its data.
   */
  readonly properties: Readonly<Record<string, string>>;
  /** Delayed delivery (Service Bus ScheduledEnqueueTime); absent = now. */
  readonly deliverAt?: Date;
  /**
   * The publisher vouches that this id goes out once: it names a state change written in the
   * same transaction as the publish (`publishInTransaction`, `settleDelivery`), which a retry
   * finds done and does not repeat. A bus may then skip its duplicate detection for the message:
   * the embedded bus writes no dedupe key for it (issue 29: two rows and their index entries
   * per step, about a tenth of a step's WAL), and a later publish of the same id is not dropped.
   * A copy that does go out (a takeover's second result) reaches consumers, which handle copies
   * as they handle any at-least-once redelivery. Absent: deduplicated within the window.
   */
  readonly onceByTransaction?: boolean;
}

export interface Delivery {
  readonly id: string;
  readonly topic: Topic;
  readonly body: unknown;
  readonly properties: Readonly<Record<string, string>>;
  /** 1 on first delivery; a handler that throws gets the message again until the limit. */
  readonly deliveryCount: number;
}

export interface Subscription {
  readonly topic: Topic;
  /** Subscription name, e.g. `orchestrator` or `worker-worker-01`. */
  readonly name: string;
  /** Equality filter on application properties (000: SQL filter `WorkerId = '…'`). */
  readonly filter?: Readonly<Record<string, string>>;
  /** Messages handled at once by this process for this subscription. */
  readonly concurrency?: number;
}

/**
 * Throwing from a handler means "not processed": the message is redelivered, then dead-lettered
 * after MAX_DELIVERY_ATTEMPTS. Throwing a non-retriable MatoolkitError (a malformed message,
 * `message.invalid`) dead-letters it at once with that reason: retrying cannot repair it.
 */
export type DeliveryHandler = (delivery: Delivery) => Promise<void>;

export interface DeadLetter {
  readonly id: string;
  readonly topic: Topic;
  readonly subscription: string;
  readonly body: unknown;
  readonly properties: Readonly<Record<string, string>>;
  readonly deliveryCount: number;
  /** Sanitized error of the last failed delivery. */
  readonly error: string;
  readonly deadLetteredAt: Date;
}

/** What a handler's end records, publishes and acknowledges at once (`MessageBus.settleDelivery`). */
export interface DeliverySettlement {
  readonly delivery: Delivery;
  /** The idempotency key's outcome, as `IdempotencyStore.complete(key, value, ttlSeconds)` records it. */
  readonly outcome: { readonly key: string; readonly value: unknown; readonly ttlSeconds: number };
  readonly messages: readonly OutgoingMessage[];
}

/**
 * Takes up to the subscription's batch size of due messages INSIDE the caller's open transaction
 * `trx` and hands them out: they are consumed when `trx` commits and are all still queued, as if
 * never taken, when it rolls back. At most one call per batch.
 */
export type TakeDeliveries = (trx: AnyKysely) => Promise<readonly Delivery[]>;

/**
 * One batch of `MessageBus.consumeInTransaction`: open a transaction, `take` in it, handle what it
 * returned, commit. Throwing (before or after the commit) ends the batch; see consumeInTransaction.
 */
export type TransactionalBatchHandler = (take: TakeDeliveries) => Promise<void>;

export interface TransactionalSubscription extends Subscription {
  /** Messages taken in one transaction at most. */
  readonly batchSize: number;
  /**
   * Batches in flight at once, at most (each its own transaction); default 1. More than one
   * only while batches come back full: a wake on an idle queue starts one.
   */
  readonly batchesAtOnce?: number;
  /**
   * Take only the messages whose `property` has one of `values`, in the order they fall due
   * (`deliverAt`, then publish order); the others are left to the subscription's `subscribe`
   * consumer, which must exist and may take matching ones too. For a kind of message that is
   * many and alike among others that are not (the orchestrator's retry and poll checks among its
   * events). Absent: every message, in publish order.
   */
  readonly only?: TakeOnly;
  /**
   * Each batch's transaction commits without waiting for its WAL to reach the disk
   * (`synchronous_commit` off for that transaction alone, set by the statement that takes the
   * batch: no round trip of its own; PostgreSQL "Asynchronous Commit",
   * https://www.postgresql.org/docs/current/wal-async-commit.html). Only a crash of PostgreSQL
   * itself, within about three `wal_writer_delay`s, can undo such a commit, and then wholly: the
   * messages are queued again with the work they caused undone. For a handler whose every effect
   * stays in this database until a later synchronous commit makes it durable first (WAL is
   * flushed in order): the bus's own messages leave it only through one (a fetching consumer's
   * fetch), so a handler that only writes and publishes in `trx` qualifies; one that calls out
   * (HTTP, mail) after its commit does not. Default false. Issue 29: the orchestrator's result
   * transaction, its serial stage, waited ~3.6 ms per commit on the flush.
   */
  readonly commitAsynchronously?: boolean;
}

/** Which messages a transactional consumer takes (TransactionalSubscription.only). */
export interface TakeOnly {
  readonly property: string;
  readonly values: readonly string[];
}

export interface MessageBus {
  publish(message: OutgoingMessage): Promise<void>;
  /**
   * Publishes many messages in one round trip, with the guarantees of `publish` for each one:
   * dedupe by (topic, id) within the window (unless `onceByTransaction`) — two messages of one
   * call with the same topic and id count as a duplicate too: the first goes out —, filters
   * applied now, `deliverAt` honoured, a message matching no subscription dropped. All or
   * nothing for the caller: a thrown error means "publish the whole call again"; what did go out
   * is then dropped as a duplicate. An empty array does nothing.
   */
  publishMany(messages: readonly OutgoingMessage[]): Promise<void>;
  /**
   * Offered only by a bus that lives in the caller's database (the embedded one): publishes, with
   * the guarantees of publishMany, INSIDE the caller's open transaction `trx`, so the messages go
   * out at its commit and never if it rolls back, as through the transactional outbox but
   * without the outbox row, its relay pass and a second round trip (issue 29). Callers keep the
   * outbox for a bus without it (Dapr: the broker is not in the transaction).
   */
  readonly publishInTransaction?: (trx: AnyKysely, messages: readonly OutgoingMessage[]) => Promise<void>;
  /**
   * Offered only where the bus and the idempotency store share one database (the embedded bus
   * with the embedded idempotency store; the platform removes it otherwise): a handler's last act
   * in ONE transaction — record `outcome` under its idempotency key exactly as the store's
   * `complete` does, publish `messages` with the guarantees of publishMany, and acknowledge
   * `delivery`, which is then not delivered again whatever the handler does next (issue 29: the
   * worker's three round trips at the end of a job, and their waits, become one; concurrent calls
   * share one statement). All or nothing: after a throw nothing was recorded, published or
   * acknowledged, and the call may be made again. Resolves false, having done nothing, for a
   * delivery this bus did not hand out (the caller records and publishes the usual way).
   */
  readonly settleDelivery?: (settlement: DeliverySettlement) => Promise<boolean>;
  /**
   * Offered only by a bus that lives in the caller's database (the embedded one): consumes the
   * subscription batch by batch, each batch removed from its queue by the statement that hands it
   * out, in the handler's own transaction (issue 29: no separate fetch that marks the messages
   * taken and no separate acknowledgement; the messages and the work they cause commit together,
   * exactly once). One batch at a time per call unless `batchesAtOnce` allows more (then only
   * while batches come back full); a batch starts when messages are published, when the last
   * batch was full, or at the polling interval.
   *
   * A batch whose handler throws after taking messages hands each of them, if still queued (a
   * rollback), to `fallback` one by one with the guarantees of `subscribe`: redelivery, its
   * delivery count, the dead letter after MAX_DELIVERY_ATTEMPTS, at once for a non-retriable
   * error. So one bad message fails alone and the others go through. A throw after the commit
   * redelivers nothing: the messages are consumed, as after a crash at that moment.
   * Callers subscribe the usual way where the bus does not offer it (Dapr). A bus offering it
   * keeps all it is given in the caller's database: see `commitAsynchronously`.
   */
  readonly consumeInTransaction?: (
    subscription: TransactionalSubscription,
    handleBatch: TransactionalBatchHandler,
    fallback: DeliveryHandler,
  ) => Promise<void>;
  /**
   * Creates the subscription durably without consuming it, as infrastructure does for Service
   * Bus (Bicep) or Dapr (declarative subscriptions): messages published from then on wait for a
   * consumer. A message that matches no subscription at publish time is dropped (Service Bus
   * semantics), so topology is declared before anything is published to it.
   */
  declareSubscription(subscription: Subscription): Promise<void>;
  subscribe(subscription: Subscription, handler: DeliveryHandler): Promise<void>;
  deadLetters(subscription: Pick<Subscription, "topic" | "name">): Promise<DeadLetter[]>;
  stop(): Promise<void>;
}

/**
 * Thrown by a handler that cannot take a message right now for a reason that is not the
 * message's fault (the process is shutting down): the message goes back to the broker. The Dapr
 * adapter does not count such a delivery as an attempt, so a restart cannot dead-letter messages
 * that arrived while it was stopping; the embedded adapter counts it like any failure (pg-boss's
 * retry delay keeps that to one or two attempts).
 */
export class DeliveryDeferredError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DeliveryDeferredError";
  }
}

/** 000: orchestrator subscriptions have max delivery count 10; after that, dead-letter. */
export const MAX_DELIVERY_ATTEMPTS = 10;
/** 000: duplicate detection window on every topic. */
export const DEFAULT_DEDUPE_WINDOW_SECONDS = 600;

import { z } from "zod";
import type { DeliveryRecord } from "./app-delivery.ts";
import type { CloudEvent } from "./cloud-event.ts";
import { JobScheduler, type JobFailurePolicy, type JobTriggerRecord, type JobView } from "./jobs.ts";
import { PubSubBroker, type BrokerMessage, type UndeliveredMessage } from "./pubsub.ts";
import { StateBackend, type StateStoreKind, type StoredItem } from "./state-store.ts";

/**
 * What several stand-in sidecars share in one test, the way real sidecars share infrastructure:
 * the message broker (topics, one consumer group per app id), the Dapr Scheduler (jobs per app id)
 * and the state store backend (one key space per component name).
 */

const brokerOptionsSchema = z.strictObject({
  /** Delivery attempts per message and consumer group before it is dead-lettered or given up. */
  maxDeliveryAttempts: z.number().int().min(1).default(10),
  /** Delay before a message answered with RETRY (or failed) is delivered again. */
  redeliveryDelayMs: z.number().min(0).default(50),
  /** Concurrent deliveries per consumer group (daprd delivers concurrently too). */
  maxInFlightPerSubscription: z.number().int().min(1).default(16),
  /**
   * Status for a `first-write` save without ETag on an existing key. Redis and PostgreSQL state
   * stores report it as a plain error, which daprd answers with 500 ERR_STATE_SAVE; stores that
   * report an ETag mismatch (Cosmos DB, Azure Table Storage) give 409.
   */
  stateFirstWriteConflictStatus: z.union([z.literal(500), z.literal(409)]).default(500),
  /**
   * Retries of the state store's outbound resiliency policy (`maxRetries`). daprd re-runs a save
   * that failed with a plain store error (a first-write conflict on Redis/PostgreSQL/DynamoDB, a
   * timeout) and never one that failed with an ETag error (pkg/components/state/bulk.go). 0 is
   * daprd without a policy.
   */
  stateSaveRetries: z.number().int().min(0).default(0),
  /**
   * Which store the state store imitates, for what a key past its TTL does (state-store.ts
   * `StateStoreKind`): `redis` drops it; `postgresql-v2` keeps it unswept but treats it as absent;
   * `dynamodb` hides it from reads while it still fails a first-write with a plain 500, until
   * `sweepExpiredState()`.
   */
  stateStoreKind: z.enum(["redis", "postgresql-v2", "dynamodb"]).default("redis"),
  /** Clock of the state store's TTLs (tests move it instead of waiting); the wall clock by default. */
  stateClock: z
    .custom<() => Date>((value) => typeof value === "function", "stateClock must be a function")
    .optional(),
  /** Failure policy for jobs that set none; daprd's default is 3 retries, 1 s apart. */
  defaultJobFailurePolicy: z
    .strictObject({ maxRetries: z.number().int().min(0), intervalMs: z.number().min(0) })
    .default({ maxRetries: 3, intervalMs: 1000 }),
});

export type StandInBrokerOptions = z.input<typeof brokerOptionsSchema>;
export type ResolvedBrokerOptions = z.output<typeof brokerOptionsSchema>;

export interface StandInBroker {
  readonly options: ResolvedBrokerOptions;
  /** Every message published to `topic` (dead-letter topics included), in publish order. */
  messages(topic: string, pubsubName?: string): BrokerMessage[];
  /** Resolves with the first CloudEvent on `topic` (already published or future) matching `predicate`. */
  waitForMessage(
    topic: string,
    predicate?: (event: CloudEvent, message: BrokerMessage) => boolean,
    timeoutMs?: number,
  ): Promise<CloudEvent>;
  /**
   * Messages lost without reaching a dead-letter topic: given up on after the last attempt because
   * their subscription had none (`reason: "attempts-exhausted"`), or acknowledged and dropped
   * because the app answered 404, as daprd 1.16 does (`reason: "dropped-on-404"`).
   */
  undelivered(): UndeliveredMessage[];
  /** Delivery attempts of every sidecar on this broker. */
  deliveries(): DeliveryRecord[];
  /** Scheduled jobs (all app ids, or one). */
  jobs(appId?: string): JobView[];
  /** Job trigger attempts (all app ids, or one). */
  jobTriggers(appId?: string): JobTriggerRecord[];
  /** Live entries of a state store, keyed as stored (`<appId>||<key>`). */
  stateEntries(storeName: string): ReadonlyMap<string, StoredItem>;
  /**
   * Runs the store's expiry sweep (DynamoDB's TTL process, PostgreSQL's garbage collector): items
   * past their TTL are removed. Nothing else removes them under `dynamodb`/`postgresql-v2`.
   */
  sweepExpiredState(): void;
  /**
   * Fault: the next save of `key` (as the app names it) commits, but the sidecar's call times out
   * (componentCall timeout), so daprd treats it as a plain error: retried per `stateSaveRetries`.
   */
  timeOutNextStateSave(key: string): void;
  /** How many times the store ran a save of `key` (as the app names it), retries included. */
  stateSaveExecutions(key: string): number;
  /**
   * Fault: the pub/sub component refuses the next message published with CloudEvent id
   * `cloudEventId` (once): a single publish answers 500 ERR_PUBSUB_PUBLISH_MESSAGE, a bulk publish
   * lists that entry in `failedEntries` and publishes the others (bulk publish is not atomic).
   */
  failNextPublish(cloudEventId: string, error?: string): void;
  /** Stops broker timers (redeliveries, job schedules). Sidecars should be stopped first. */
  close(): void;
  /** @internal parts the sidecars use. */
  readonly internals: BrokerInternals;
}

export interface BrokerInternals {
  readonly pubsub: PubSubBroker;
  readonly state: StateBackend;
  readonly scheduler: JobScheduler;
  recordDelivery(record: DeliveryRecord): void;
  nextSidecarId(appId: string): string;
  /** True once for a key given to `timeOutNextStateSave`. */
  takeStateSaveTimeout(key: string): boolean;
  countStateSave(key: string): void;
  /** The component's error for a message given to `failNextPublish` (once), else undefined. */
  takePublishFailure(cloudEventId: string): string | undefined;
}

export function createStandInBroker(options: StandInBrokerOptions = {}): StandInBroker {
  const resolved = brokerOptionsSchema.parse(options);
  const now = (): Date => new Date();
  const pubsub = new PubSubBroker({
    maxDeliveryAttempts: resolved.maxDeliveryAttempts,
    redeliveryDelayMs: resolved.redeliveryDelayMs,
    maxInFlightPerSubscription: resolved.maxInFlightPerSubscription,
    now,
  });
  const state = new StateBackend(resolved.stateClock ?? now, resolved.stateStoreKind as StateStoreKind);
  const defaultFailurePolicy: JobFailurePolicy = { kind: "constant", ...resolved.defaultJobFailurePolicy };
  const scheduler = new JobScheduler({ defaultFailurePolicy, now });
  const deliveryLog: DeliveryRecord[] = [];
  const sidecarCounts = new Map<string, number>();
  const saveTimeouts = new Set<string>();
  const saveExecutions = new Map<string, number>();
  const publishFailures = new Map<string, string>();

  return {
    options: resolved,
    messages: (topic, pubsubName) => pubsub.messages(topic, pubsubName),
    waitForMessage: (topic, predicate = () => true, timeoutMs = 5000) =>
      pubsub.waitForMessage(topic, predicate, timeoutMs),
    undelivered: () => pubsub.undelivered(),
    deliveries: () => [...deliveryLog],
    jobs: (appId) => scheduler.list(appId),
    jobTriggers: (appId) => scheduler.triggers(appId),
    stateEntries: (storeName) => state.entries(storeName),
    sweepExpiredState: () => state.sweepExpired(),
    timeOutNextStateSave: (key) => void saveTimeouts.add(key),
    stateSaveExecutions: (key) => saveExecutions.get(key) ?? 0,
    failNextPublish: (cloudEventId, error = "the broker refused the message") =>
      void publishFailures.set(cloudEventId, error),
    close: () => {
      pubsub.close();
      scheduler.close();
    },
    internals: {
      pubsub,
      state,
      scheduler,
      recordDelivery: (record) => deliveryLog.push(record),
      takeStateSaveTimeout: (key) => saveTimeouts.delete(key),
      countStateSave: (key) => void saveExecutions.set(key, (saveExecutions.get(key) ?? 0) + 1),
      takePublishFailure: (cloudEventId) => {
        const error = publishFailures.get(cloudEventId);
        publishFailures.delete(cloudEventId);
        return error;
      },
      nextSidecarId: (appId) => {
        const count = (sidecarCounts.get(appId) ?? 0) + 1;
        sidecarCounts.set(appId, count);
        return `${appId}#${count}`;
      },
    },
  };
}

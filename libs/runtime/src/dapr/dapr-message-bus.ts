import { MatoolkitError, reasonCodes, toSafeError } from "@matoolkit/domain";
import { context } from "@opentelemetry/api";
import type { AnyKysely } from "../any-kysely.ts";
import type { Logger } from "../logger.ts";
import {
  DeliveryDeferredError,
  MAX_DELIVERY_ATTEMPTS,
  type DeliveryHandler,
  type MessageBus,
  type OutgoingMessage,
  type Subscription,
} from "../ports/index.ts";
import type { Topic } from "@matoolkit/domain";
import { outgoingMessageSchema, type CheckedMessage } from "../embedded/message-envelope.ts";
import {
  bulkPublishEntry,
  bulkPublishFailureSchema,
  daprCloudEventSchema,
  deliveryContextOf,
  isTopic,
  propertiesOf,
  publishMetadata,
} from "./cloud-event-delivery.ts";
import type { DaprAppServer, DaprDeliveryStatus } from "./dapr-app-server.ts";
import type { DaprHttp } from "./dapr-http.ts";
import { chunkForBulkPublish } from "./bulk-publish-chunks.ts";
import {
  createDeadLetterIntake,
  deadLetterRoute,
  deadLetterSubscription,
  type AdoptedDeadLetters,
} from "./dead-letter-intake.ts";
import { assertDeadLetterTableWritable, readDaprDeadLetters, recordDeadLetter } from "./dead-letter-table.ts";
import type { DeliveryLedger } from "./delivery-ledger.ts";
import {
  announceSubscriptions,
  subscriptionRoute,
  topicRoute,
  unmatchedRoute,
} from "./subscription-announcement.ts";

/** Sends a message now: what a delayed delivery does when its time comes. */
export type PublishNow = (message: OutgoingMessage, extraMetadata?: Record<string, string>) => Promise<void>;

/** How a message with a future `deliverAt` is held back: a timers adapter provides it. */
export type DeliverLater = (
  message: OutgoingMessage & { deliverAt: Date },
  publishNow: PublishNow,
) => Promise<void>;

export interface DaprMessageBusOptions {
  readonly http: DaprHttp;
  readonly app: DaprAppServer;
  readonly pubsubName: string;
  /**
   * Every subscription's deliveries go through it: besides attempts and leases, it is the bus's
   * duplicate detection (a message id handled within its memory is acknowledged unrun).
   */
  readonly ledger: DeliveryLedger;
  /**
   * The service's database: dead letters are recorded there with their reason. Absent (the
   * worker on Dapr has no SQL access): a dead letter is logged with its reason and Dapr forwards
   * it to `<topic>-deadletter`, where an app with a database adopts it (`adoptedDeadLetters`).
   */
  readonly db?: AnyKysely;
  /** Other apps' topics whose dead letters this app records (needs `db`). */
  readonly adoptedDeadLetters?: readonly AdoptedDeadLetters[];
  readonly deliverLater: DeliverLater;
  readonly logger: Logger;
  /** Topics announced with a default route even before anything subscribes (tests). */
  readonly catchAllTopics?: readonly Topic[];
  /**
   * How publishMany sends its immediate messages: true (default) through Dapr's bulk publish API
   * (`/v1.0-alpha1/publish/bulk`, alpha: docs.dapr.io/reference/api/pubsub_api), false one by one
   * through the stable publish API (`/v1.0/publish`). "Azure Container Apps doesn't guarantee the
   * availability of Dapr alpha APIs and features" (learn.microsoft.com/azure/container-apps/
   * dapr-overview, "Limitations"), so the aca runtime publishes one by one
   * (MATOOLKIT_DAPR_BULK_PUBLISH, libs/platform/src/platform-config.ts).
   */
  readonly bulkPublish?: boolean;
}

/**
 * How long a publish (single or bulk) may take before the app gives up on it. A give-up while daprd
 * is still retrying toward the broker republishes messages that may already be out, so the limit
 * is above daprd's whole outbound window under dapr/resources/resiliency.yaml (`publishRetry`: 6
 * attempts of at most `componentCall` 10 s, plus ~15 s of exponential backoff: ~75 s).
 */
export const PUBLISH_TIMEOUT_MS = 120_000;

/** Single publishes in flight at once for a publishMany without the bulk API. */
const SINGLE_PUBLISH_PARALLELISM = 16;

interface LocalSubscription {
  readonly subscription: Subscription;
  readonly handler: DeliveryHandler;
}

/**
 * MessageBus through the Dapr sidecar. Publishing goes through the sidecar's publish API with the
 * CloudEvent id/type and the routing properties as metadata; consuming is programmatic
 * subscriptions on the app server, answering Dapr's SUCCESS / RETRY / DROP contract:
 * - SUCCESS only after the handler resolved (or for a duplicate of a message already handled);
 * - RETRY when the handler threw (a transient failure), when another replica is handling the
 *   same message, or when this process is stopping; a thrown error is never acknowledged;
 * - DROP for a malformed CloudEvent, a non-retriable error (e.g. `message.invalid`), or the
 *   MAX_DELIVERY_ATTEMPTS-th failure: the reason is logged and recorded, and Dapr forwards the
 *   message to `<topic>-deadletter`.
 * What Dapr dead-letters on its own (app unreachable through the inbound retries) is read back from `<topic>-deadletter`
 * into the same table (dead-letter-intake.ts).
 * `declareSubscription` does nothing here: with Dapr, durable subscriptions are the broker's
 * (created when the app first subscribes, or provisioned by infrastructure).
 *
 * Duplicate detection is the consumers': a second publish of an id goes to the broker (Azure
 * Service Bus drops it there, duplicate detection being on for our topics:
 * deploy/aca/modules/service-bus.bicep) and every subscription's ledger acknowledges the copy
 * without running its handler while it remembers the id (the dedupe window). Checking and
 * recording each published id in the state store as well cost two sidecar calls per message,
 * in the worker's path between a job's end and its result (issue 29), to drop only what the
 * ledgers drop anyway. Of two copies published close together a subscription handles the first
 * to reach it, which under concurrent deliveries need not be the first published: publishers
 * give one id one body (an outbox row, a recorded job outcome), so that is the same message.
 */
export interface DaprMessageBus extends MessageBus {
  /** Publishes at once, ignoring `deliverAt`: what a delayed delivery's trigger calls. */
  readonly publishNow: PublishNow;
}

export async function createDaprMessageBus(options: DaprMessageBusOptions): Promise<DaprMessageBus> {
  const { http, app, ledger, db, pubsubName } = options;
  const logger = options.logger.child({ component: "dapr-bus" });
  if (db !== undefined) await assertDeadLetterTableWritable(db);
  if (db === undefined && (options.adoptedDeadLetters ?? []).length > 0) {
    throw new Error("Adopting other apps' dead letters needs a database to record them in");
  }

  const local = new Map<Topic, LocalSubscription[]>();
  const inFlight = new Set<Promise<unknown>>();
  const announcedRoutes = new Set<string>();
  const unmatchedRoutes = new Set<Topic>();
  let stopped = false;

  /**
   * One message through the sidecar's publish API (`POST /v1.0/publish/{pubsub}/{topic}`, metadata
   * as `metadata.<key>` query parameters), with our HTTP client rather than @dapr/dapr's: the
   * SDK's publish (3.18) has no time limit, so a sidecar that hangs would hang the caller for good.
   */
  const publishNow: PublishNow = async (message, extraMetadata = {}) => {
    const metadata: Record<string, string> = { ...publishMetadata(message), ...extraMetadata };
    await http.request({
      method: "POST",
      path: `/v1.0/publish/${encodeURIComponent(pubsubName)}/${encodeURIComponent(message.topic)}`,
      operation: "pubsub.publish",
      query: Object.fromEntries(Object.entries(metadata).map(([key, value]) => [`metadata.${key}`, value])),
      json: message.body,
      timeoutMs: PUBLISH_TIMEOUT_MS,
    });
  };

  app.announceSubscriptions(() =>
    announceSubscriptions({
      pubsubName,
      subscriptions: [...local.values()].flat().map((entry) => entry.subscription),
      catchAllTopics: options.catchAllTopics ?? [],
    }),
  );
  // Every topic this app consumes also has its dead-letter topic read back (dead-letter-intake.ts),
  // and so have adopted topics; without a database there is nowhere to record them.
  const adoptedTopics = (options.adoptedDeadLetters ?? []).map((adopted) => adopted.topic);
  app.announceSubscriptions(() =>
    db === undefined
      ? []
      : [...new Set<Topic>([...(options.catchAllTopics ?? []), ...local.keys(), ...adoptedTopics])].map(
          (topic) => deadLetterSubscription(pubsubName, topic),
        ),
  );
  const ledgerKey = (topic: Topic, subscription: Subscription, messageId: string) =>
    `delivery|${topic}|${subscription.name}|${messageId}`;
  const intake =
    db === undefined
      ? undefined
      : createDeadLetterIntake({
          db,
          ledger,
          logger,
          subscriptionsOf: (topic) => (local.get(topic) ?? []).map((entry) => entry.subscription),
          adoptedSubscriptionOf: (topic, properties) =>
            options.adoptedDeadLetters
              ?.find((adopted) => adopted.topic === topic)
              ?.subscriptionOf(properties),
          ledgerKey,
        });
  const intakeRoutes = new Set<Topic>();
  function ensureIntakeRoute(topic: Topic): void {
    if (intake === undefined || intakeRoutes.has(topic)) return;
    intakeRoutes.add(topic);
    app.route(deadLetterRoute(topic), (event) =>
      track(stopped ? Promise.resolve("RETRY") : intake(topic, event)),
    );
  }
  for (const topic of options.catchAllTopics ?? []) {
    ensureRoute(topicRoute(topic), topic);
    ensureIntakeRoute(topic);
  }
  for (const topic of adoptedTopics) ensureIntakeRoute(topic);

  function ensureRoute(path: string, topic: Topic): void {
    if (announcedRoutes.has(path)) return;
    announcedRoutes.add(path);
    app.route(path, (event) => track(deliver(topic, event)));
  }

  function track<T>(work: Promise<T>): Promise<T> {
    inFlight.add(work);
    return work.finally(() => inFlight.delete(work));
  }

  /**
   * One HTTP delivery from the sidecar. Every local subscription of the topic whose filter matches
   * gets it (several subscriptions of one topic in one app share Dapr's single delivery); each has
   * its own ledger entry, so a retry re-runs only those that have not succeeded.
   */
  async function deliver(topic: Topic, raw: unknown): Promise<DaprDeliveryStatus> {
    if (stopped) return "RETRY";
    const parsed = daprCloudEventSchema.safeParse(raw);
    if (!parsed.success) {
      logger.error({ reason: reasonCodes.messageInvalid, topic }, "delivery is not a CloudEvent: dropped");
      return "DROP";
    }
    const event = parsed.data;
    const properties = propertiesOf(event);
    const matching = (local.get(topic) ?? []).filter(({ subscription }) =>
      Object.entries(subscription.filter ?? {}).every(([name, value]) => properties[name] === value),
    );
    // Nothing here for it (a replica without that subscription): another consumer may have one.
    if (matching.length === 0) return "RETRY";
    // Handlers run in the CloudEvent's trace context (and publish time): see deliveryContextOf.
    const delivered = deliveryContextOf(event);
    const statuses = await Promise.all(
      matching.map((entry) =>
        context.with(delivered, () =>
          deliverTo(entry, { id: event.id, topic, body: event.data, properties }),
        ),
      ),
    );
    if (statuses.includes("RETRY")) return "RETRY";
    return statuses.every((status) => status === "DROP") ? "DROP" : "SUCCESS";
  }

  async function deliverTo(
    entry: LocalSubscription,
    message: { id: string; topic: Topic; body: unknown; properties: Record<string, string> },
  ): Promise<DaprDeliveryStatus> {
    const { subscription, handler } = entry;
    const key = ledgerKey(message.topic, subscription, message.id);
    const begun = await ledger.begin(key);
    switch (begun.kind) {
      case "duplicate":
        return "SUCCESS";
      case "busy":
        return "RETRY";
      case "run":
        break;
      default: {
        const unknown: never = begun;
        throw new Error(`Unknown ledger outcome ${JSON.stringify(unknown)}`);
      }
    }
    try {
      await handler({ ...message, deliveryCount: begun.attempt });
      await ledger.succeeded(key, begun.attempt);
      return "SUCCESS";
    } catch (error) {
      if (error instanceof DeliveryDeferredError) {
        // Not the message's fault (e.g. shutting down): give the attempt back, and try later.
        await ledger.failed(key, begun.attempt - 1);
        return "RETRY";
      }
      const safe = toSafeError(error);
      const poison = error instanceof MatoolkitError && !error.retriable;
      if (!poison && begun.attempt < MAX_DELIVERY_ATTEMPTS) {
        logger.warn(
          {
            messageId: message.id,
            subscription: subscription.name,
            attempt: begun.attempt,
            reason: safe.reason,
          },
          "delivery failed; the broker will redeliver it",
        );
        await ledger.failed(key, begun.attempt);
        return "RETRY";
      }
      const reason = `${safe.reason}: ${safe.message}`;
      // Without a database the log line below is the record; an app with one adopts the copy.
      if (db !== undefined) {
        await recordDeadLetter(db, {
          id: message.id,
          topic: message.topic,
          subscription: subscription.name,
          body: message.body,
          properties: message.properties,
          deliveryCount: begun.attempt,
          error: reason,
        });
      }
      // Marked handled: further copies (Dapr's redelivery, a broker retry) are acknowledged.
      await ledger.succeeded(key, begun.attempt);
      logger.error(
        {
          messageId: message.id,
          subscription: subscription.name,
          attempts: begun.attempt,
          reason: safe.reason,
          error: safe.message,
        },
        "message dead-lettered",
      );
      return "DROP";
    }
  }

  /**
   * One bulk publish request (Dapr's alpha bulk API: not atomic). Throws when any entry failed,
   * naming how many (the components' error strings may quote payloads: only counts and Dapr's
   * code are kept).
   */
  async function publishBulk(topic: Topic, messages: readonly CheckedMessage[]): Promise<void> {
    const response = await http.request({
      method: "POST",
      path: `/v1.0-alpha1/publish/bulk/${encodeURIComponent(pubsubName)}/${encodeURIComponent(topic)}`,
      operation: "pubsub.publishBulk",
      accept: [500],
      timeoutMs: PUBLISH_TIMEOUT_MS,
      json: messages.map((message) => bulkPublishEntry(message)),
    });
    if (response.ok) return;
    // 500: the entries that failed are listed. Without a readable, non-empty list (some daprd
    // errors come without one) none is known to have gone out.
    const parsed = bulkPublishFailureSchema.safeParse(await response.json().catch(() => undefined));
    const failed = parsed.success ? parsed.data.failedEntries.length : 0;
    const count = failed === 0 ? messages.length : failed;
    const code = parsed.success ? parsed.data.errorCode : undefined;
    throw new Error(
      `Dapr bulk publish to ${topic} failed for ${count} of ${messages.length} messages${code === undefined ? "" : ` (${code})`}`,
    );
  }

  /** Each message through the stable publish API, some at once; throws the first failure. */
  async function publishSingly(messages: readonly CheckedMessage[]): Promise<void> {
    const failures = await mapInParallel(messages, SINGLE_PUBLISH_PARALLELISM, (message) =>
      publishNow(message).then(
        () => undefined,
        (error: unknown) => ({ error }),
      ),
    );
    const failed = failures.find((failure) => failure !== undefined);
    if (failed !== undefined) throw failed.error;
  }

  return {
    publishNow,
    async publish(message) {
      const checked = outgoingMessageSchema.parse(message);
      if (checked.deliverAt !== undefined && checked.deliverAt.getTime() > Date.now()) {
        await options.deliverLater({ ...checked, deliverAt: checked.deliverAt }, publishNow);
      } else {
        await publishNow(checked);
      }
    },
    /**
     * Immediate messages go out through Dapr's bulk publish API, one request per topic (and per
     * chunk a Service Bus batch takes whole: bulk-publish-chunks.ts), or one by one without it
     * (`bulkPublish: false`); delayed ones through `deliverLater`, one by one. A (topic, id) given
     * twice in one call goes out once (the first). Not atomic: when part of the call fails it
     * throws once the rest is out, and the caller publishes it all again; the consumers' ledgers
     * drop the copies of what went out.
     */
    async publishMany(messages) {
      const firsts = new Map<string, CheckedMessage>();
      for (const message of messages.map((each) => outgoingMessageSchema.parse(each))) {
        const key = `${message.topic}|${message.id}`;
        if (!firsts.has(key)) firsts.set(key, message);
      }
      const fresh = [...firsts.values()];
      if (fresh.length < messages.length) {
        logger.debug({ duplicates: messages.length - fresh.length }, "duplicate ids in one publish dropped");
      }

      const now = Date.now();
      const delayed = fresh.filter(
        (message) => message.deliverAt !== undefined && message.deliverAt.getTime() > now,
      );
      const delayedSet = new Set(delayed);
      const byTopic = new Map<Topic, CheckedMessage[]>();
      for (const message of fresh) {
        if (delayedSet.has(message)) continue;
        byTopic.set(message.topic, [...(byTopic.get(message.topic) ?? []), message]);
      }
      const immediate =
        options.bulkPublish === false
          ? [publishSingly([...byTopic.values()].flat())]
          : [...byTopic].flatMap(([topic, group]) =>
              chunkForBulkPublish(group).map((entries) => publishBulk(topic, entries)),
            );
      // Every part runs to its end before the first failure is thrown: the caller's retry then
      // meets a quiet bus, not our own publishes still in flight.
      const outcomes = await Promise.allSettled([
        ...immediate,
        ...delayed.map((message) =>
          options.deliverLater({ ...message, deliverAt: message.deliverAt! }, publishNow),
        ),
      ]);
      const failure = outcomes.find((outcome) => outcome.status === "rejected");
      if (failure !== undefined) throw failure.reason;
    },
    async declareSubscription() {
      // Durable subscriptions belong to the broker and Dapr (see above): nothing to do.
    },
    async subscribe(subscription, handler) {
      if (!isTopic(subscription.topic)) throw new Error(`Unknown topic ${subscription.topic}`);
      const catchAll = (options.catchAllTopics ?? []).includes(subscription.topic);
      if (app.listening && !catchAll) {
        // daprd reads /dapr/subscribe once, when the app port opens: this one would never arrive.
        throw new Error(
          `Subscription ${subscription.name} on ${subscription.topic} came after the Dapr app server started; subscribe before Platform.start()`,
        );
      }
      const existing = local.get(subscription.topic) ?? [];
      local.set(subscription.topic, [...existing, { subscription, handler }]);
      ensureRoute(subscriptionRoute(subscription.topic, subscription.name), subscription.topic);
      ensureIntakeRoute(subscription.topic);
      if (!unmatchedRoutes.has(subscription.topic)) {
        unmatchedRoutes.add(subscription.topic);
        app.route(unmatchedRoute(subscription.topic), async () => "SUCCESS");
      }
    },
    deadLetters: async (subscription) => {
      if (db === undefined) {
        throw new Error(
          "This app has no database: its dead letters are recorded by the app that adopts them (the orchestrator)",
        );
      }
      return readDaprDeadLetters(db, subscription);
    },
    async stop() {
      stopped = true;
      await Promise.allSettled([...inFlight]);
    },
  };
}

/** `work` over `items` with at most `parallelism` at once; results in input order. */
async function mapInParallel<T, R>(
  items: readonly T[],
  parallelism: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const index = next;
      next += 1;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallelism, items.length) }, lane));
  return results;
}

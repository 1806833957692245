import type { AnyKysely } from "../any-kysely.ts";
import type { Logger } from "../logger.ts";
import { routingProperties, topics, type Topic } from "@matoolkit/domain";
import { workerJobsSubscription } from "../topology.ts";
import type { IdempotencyStore, Timers } from "../ports/index.ts";
import { createDaprAppServer, type DaprAppServer } from "./dapr-app-server.ts";
import { createDaprHttp, type DaprSidecarAddress } from "./dapr-http.ts";
import { createDaprIdempotencyStore } from "./dapr-idempotency-store.ts";
import { createDaprJobsClient, type DaprJobsApiVersion } from "./dapr-jobs-client.ts";
import { createDaprJobsTimers } from "./dapr-jobs-timers.ts";
import { createDaprMessageBus, type DaprMessageBus, type DeliverLater } from "./dapr-message-bus.ts";
import { createDaprStateStore } from "./dapr-state-store.ts";
import { createDelayedMessageTimers } from "./delayed-message-timers.ts";
import { assertPubsubCanDelay, PubsubCannotDelayError } from "./pubsub-delay-capability.ts";
import { createDeliveryLedger } from "./delivery-ledger.ts";
import { waitForSidecarSubscriptions } from "./wait-for-subscriptions.ts";
import { waitForSidecar } from "./wait-for-sidecar.ts";

export type DaprTimersKind = "dapr-jobs" | "dapr-delayed-messages";

export interface DaprRuntimeOptions {
  readonly sidecar: DaprSidecarAddress;
  readonly app: { readonly host: string; readonly port: number; readonly apiToken?: string };
  readonly pubsubName: string;
  readonly stateStoreName: string;
  readonly jobsApiVersion: DaprJobsApiVersion;
  /**
   * The service's database (dead letters are recorded there). Absent for the worker, which has
   * no SQL access on Dapr: its dead letters are logged, and adopted by the orchestrator.
   */
  readonly db?: AnyKysely;
  /**
   * Subscribe to `worker-jobs-deadletter` and record the worker pools' dead letters in `db`
   * (the orchestrator: the apps of the worker pools have no database).
   */
  readonly adoptWorkerJobDeadLetters?: boolean;
  readonly logger: Logger;
  readonly dedupeWindowSeconds: number;
  /** Which ports to build on Dapr; the others stay with whoever else provides them. */
  readonly ports: {
    readonly bus: boolean;
    readonly timers?: DaprTimersKind;
    readonly idempotency: boolean;
  };
  /** Topics announced with a catch-all route before anything subscribes (tests only). */
  readonly catchAllTopics?: readonly Topic[];
  /** publishMany through Dapr's alpha bulk publish API (default) or one by one (dapr-message-bus.ts). */
  readonly bulkPublish?: boolean;
}

export interface DaprRuntime {
  readonly bus?: DaprMessageBus;
  readonly timers?: Timers;
  readonly idempotency?: IdempotencyStore;
  readonly app: DaprAppServer;
  /**
   * Resolves once the sidecar answered and, with the Dapr bus, subscribed this app's topics at the
   * broker; until then /readyz says 503 and the outbox relay publishes nothing.
   */
  readonly sidecarReady: Promise<void>;
  /**
   * Opens the app port. Call it after every service subscribed: daprd reads the app's
   * subscriptions once, when the port first answers.
   */
  start(): Promise<{ readonly url: string }>;
  stop(): Promise<void>;
}

/** Lock duration of 000's subscriptions: how long a running delivery keeps others off it. */
const DELIVERY_LEASE_SECONDS = 60;

export async function createDaprRuntime(options: DaprRuntimeOptions): Promise<DaprRuntime> {
  const logger = options.logger.child({ component: "dapr" });
  const http = createDaprHttp(options.sidecar);
  const app = createDaprAppServer({
    host: options.app.host,
    port: options.app.port,
    ...(options.app.apiToken === undefined ? {} : { appApiToken: options.app.apiToken }),
    logger,
  });
  const state = createDaprStateStore(http, options.stateStoreName, { logger });
  const abort = new AbortController();
  const sidecarAnswered = waitForSidecar({ http, logger, signal: abort.signal });
  // Delayed messages as Service Bus scheduled messages: refuse any other broker before a single
  // retry or poll check could go out at once. The app then never turns ready, and every delayed
  // delivery fails with the reason instead of being sent early.
  const delayCapability =
    options.ports.timers === "dapr-delayed-messages"
      ? sidecarAnswered.then(() => assertPubsubCanDelay(http, options.pubsubName))
      : sidecarAnswered;
  delayCapability.catch((error: unknown) => {
    if (error instanceof PubsubCannotDelayError)
      logger.error({ reason: "pubsub.cannot_delay" }, error.message);
  });
  // With the Dapr bus, ready also means subscribed: a message published before the sidecar
  // subscribed this app's topics can be dropped by the broker (wait-for-subscriptions.ts), so the
  // outbox relay publishes nothing before this resolves (boot-platform.ts).
  const subscribed = options.ports.bus
    ? delayCapability.then(() =>
        waitForSidecarSubscriptions({
          http,
          subscriptionsRead: app.subscriptionsRead,
          logger,
          signal: abort.signal,
        }),
      )
    : delayCapability;
  const sidecarReady = subscribed.then(() => app.setReady(true));
  // A shutdown before the sidecar ever answered rejects this; nobody needs to hear about it.
  sidecarReady.catch(() => undefined);

  const jobsTimers =
    options.ports.timers === "dapr-jobs"
      ? createDaprJobsTimers({ jobs: createDaprJobsClient(http, options.jobsApiVersion), app, state, logger })
      : undefined;
  const timers =
    jobsTimers ??
    (options.ports.timers === "dapr-delayed-messages"
      ? createDelayedMessageTimers({ state, logger })
      : undefined);

  let bus: DaprMessageBus | undefined;
  if (options.ports.bus) {
    if (timers === undefined) throw new Error("The Dapr bus needs Dapr timers for delayed messages");
    const deliverLater: DeliverLater = async (message, publishNow) => {
      await delayCapability;
      await timers.deliverLater(message, publishNow);
    };
    bus = await createDaprMessageBus({
      http,
      app,
      pubsubName: options.pubsubName,
      ledger: createDeliveryLedger({
        state,
        rememberSeconds: options.dedupeWindowSeconds,
        leaseSeconds: DELIVERY_LEASE_SECONDS,
      }),
      ...(options.bulkPublish === undefined ? {} : { bulkPublish: options.bulkPublish }),
      ...(options.db === undefined ? {} : { db: options.db }),
      ...(options.adoptWorkerJobDeadLetters === true
        ? {
            adoptedDeadLetters: [
              {
                topic: topics.workerJobs,
                subscriptionOf: (properties: Record<string, string>) => {
                  const workerId = properties[routingProperties.workerId];
                  return workerId === undefined ? undefined : workerJobsSubscription(workerId);
                },
              },
            ],
          }
        : {}),
      deliverLater,
      logger,
      ...(options.catchAllTopics === undefined ? {} : { catchAllTopics: options.catchAllTopics }),
    });
    jobsTimers?.attachPublisher(bus.publishNow);
  }

  return {
    ...(bus === undefined ? {} : { bus }),
    ...(timers === undefined ? {} : { timers }),
    ...(options.ports.idempotency ? { idempotency: createDaprIdempotencyStore(state) } : {}),
    app,
    sidecarReady,
    start: () => app.listen(),
    async stop() {
      abort.abort();
      await timers?.stop();
      await bus?.stop();
      await app.close();
    },
  };
}

import { setMaxListeners } from "node:events";
import type { AddressInfo } from "node:net";
import { z } from "zod";
import { AppChannel, AppChannelError } from "./app-channel.ts";
import { createSubscriptionConsumer, type DeliveryRecord } from "./app-delivery.ts";
import type { StandInBroker } from "./broker.ts";
import type { JobTriggerOutcome, JobTriggerRecord, JobView } from "./jobs.ts";
import type { BrokerMessage } from "./pubsub.ts";
import type { SidecarContext, SidecarLogger, SidecarLogLevel } from "./sidecar-context.ts";
import { createSidecarServer } from "./sidecar-server.ts";
import { parseSubscriptions, type Subscription } from "./subscriptions.ts";
import { TimerSet } from "./timers.ts";

/**
 * One stand-in sidecar, started the way daprd starts: the HTTP API comes up, the sidecar finishes
 * "initializing" after `startDelayMs` (outbound health turns 204), then it waits for the app port,
 * reads `GET /dapr/subscribe` once, starts delivering subscribed messages and job triggers, and
 * reports itself healthy.
 */

/** What daprd 1.16.0–1.18.2 fails a trigger of a job without data with (see triggerJob). */
const JOB_WITHOUT_DATA_ERROR =
  "job has no data: daprd cannot build the HTTP trigger request (proto: google.protobuf.Value: none of the oneof fields is set)";

const optionsSchema = z.strictObject({
  broker: z.custom<StandInBroker>(
    (value) => typeof value === "object" && value !== null && "internals" in value,
    "broker must come from createStandInBroker()",
  ),
  appId: z.string().min(1),
  /** Where the app listens for Dapr callbacks; omit for an app without callbacks. */
  appUrl: z.url({ protocol: /^https?$/ }).optional(),
  pubsubNames: z.array(z.string().min(1)).default(["matoolkit-pubsub"]),
  stateStores: z.array(z.string().min(1)).default(["matoolkit-state"]),
  /** Required from the app in `dapr-api-token` on every API but healthz (DAPR_API_TOKEN). */
  apiToken: z.string().min(1).optional(),
  /** Sent to the app in `dapr-api-token` on every callback (APP_API_TOKEN). */
  appApiToken: z.string().min(1).optional(),
  /** Emulate Azure Service Bus holding messages until metadata `ScheduledEnqueueTimeUtc`. */
  honourScheduledEnqueueTime: z.boolean().default(true),
  /** How long the sidecar takes to "initialize" before its APIs answer. */
  startDelayMs: z.number().min(0).default(0),
  port: z.number().int().min(0).max(65_535).default(0),
  host: z.string().default("127.0.0.1"),
  appRequestTimeoutMs: z.number().int().min(1).default(30_000),
  appPortPollIntervalMs: z.number().int().min(1).default(50),
  log: z.custom<SidecarLogger>((value) => typeof value === "function").optional(),
});

export type StandInSidecarOptions = z.input<typeof optionsSchema>;

export interface SubscriptionView {
  readonly pubsubName: string;
  readonly topic: string;
  readonly rules: readonly { readonly match: string | undefined; readonly path: string }[];
  readonly deadLetterTopic: string | undefined;
  readonly metadata: Readonly<Record<string, string>>;
}

export interface StandInSidecar {
  readonly appId: string;
  /** Distinguishes sidecars of the same app id in delivery and trigger logs. */
  readonly sidecarId: string;
  /** Base URL of the sidecar HTTP API; give it to the app as DAPR_HTTP_ENDPOINT. */
  readonly url: string;
  readonly port: number;
  /** Resolves once the app channel is up (app port open, subscriptions read); rejects if stopped first. */
  ready(): Promise<void>;
  subscriptions(): SubscriptionView[];
  /** This sidecar's delivery attempts to its app. */
  deliveries(): DeliveryRecord[];
  /** Problems found while discovering subscriptions (e.g. unsupported routing rules). */
  errors(): string[];
  /** Jobs of this sidecar's app id (shared with its other sidecars). */
  jobs(): JobView[];
  /** Job trigger attempts for this app id. */
  jobTriggers(): JobTriggerRecord[];
  /** Stops delivery, timers and the HTTP server; in-flight deliveries go back to the broker. */
  stop(): Promise<void>;
}

export async function startStandInSidecar(options: StandInSidecarOptions): Promise<StandInSidecar> {
  const config = optionsSchema.parse(options);
  const { broker, appId } = config;
  const sidecarId = broker.internals.nextSidecarId(appId);
  const log: SidecarLogger = config.log ?? defaultLogger(sidecarId);
  const stopController = new AbortController();
  // Every call to the app listens on this one signal while it runs (hundreds at once under load):
  // not a leak, so no MaxListenersExceededWarning.
  setMaxListeners(0, stopController.signal);
  const timers = new TimerSet();
  const detachers: (() => void)[] = [];
  const deliveryLog: DeliveryRecord[] = [];
  const discoveryErrors: string[] = [];
  let subscriptions: readonly Subscription[] = [];
  let outboundReady = false;
  let appChannelReady = false;

  let resolveReady: () => void = () => undefined;
  let rejectReady: (error: Error) => void = () => undefined;
  const readyPromise = new Promise<void>((resolve, reject) => {
    resolveReady = resolve;
    rejectReady = reject;
  });
  readyPromise.catch(() => undefined); // only callers of ready() should see the rejection

  const context: SidecarContext = {
    appId,
    sidecarId,
    appUrl: config.appUrl,
    pubsubNames: config.pubsubNames,
    stateStores: config.stateStores,
    apiToken: config.apiToken,
    honourScheduledEnqueueTime: config.honourScheduledEnqueueTime,
    broker,
    isOutboundReady: () => outboundReady,
    isAppChannelReady: () => appChannelReady,
    subscriptions: () => subscriptions,
    log,
  };

  const server = createSidecarServer(context);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.port, config.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  const channel =
    config.appUrl === undefined
      ? undefined
      : new AppChannel({
          appUrl: config.appUrl,
          appApiToken: config.appApiToken,
          requestTimeoutMs: config.appRequestTimeoutMs,
          signal: stopController.signal,
        });

  const forwardToDeadLetter = (message: BrokerMessage, deadLetterTopic: string): void => {
    const now = new Date();
    broker.internals.pubsub.publish({
      pubsubName: message.pubsubName,
      topic: deadLetterTopic,
      cloudEvent: message.cloudEvent,
      metadata: message.metadata,
      publishedAt: now,
      publishedBy: appId,
      visibleAt: now,
      deadLetterOf: { topic: message.topic, appId },
    });
    log(
      "info",
      `forwarded CloudEvent ${message.cloudEvent.id} from ${message.topic} to dead-letter topic ${deadLetterTopic}`,
    );
  };

  const recordDelivery = (record: DeliveryRecord): void => {
    deliveryLog.push(record);
    broker.internals.recordDelivery(record);
  };

  const triggerJob = async (name: string, data: unknown): Promise<JobTriggerOutcome> => {
    if (channel === undefined)
      return { kind: "failure", httpStatus: undefined, error: "sidecar has no app channel" };
    // daprd 1.16.0–1.18.2 stores a job scheduled over HTTP without `data` as an Any holding an
    // empty google.protobuf.Value (pkg/api/universal/jobs.go ScheduleJobAlpha1HTTP), and cannot
    // turn that into the trigger's body: pkg/channel/http/http_channel.go constructJobRequest
    // calls Value.MarshalJSON, which fails on a Value with no kind set. The trigger counts as
    // failed (retried per the failure policy, every retry failing the same way) and the app is
    // never called. Fixed only in 1.18.3 (dapr/dapr 0c82b9d, "Fix jobs scheduled over HTTP
    // without `data` failing to deliver"); the stand-in speaks for the pinned 1.16.5 and 1.18.1.
    // `data: null` is a Value (null_value) and is delivered as `null`.
    if (data === undefined) return { kind: "failure", httpStatus: undefined, error: JOB_WITHOUT_DATA_ERROR };
    try {
      const response = await channel.request("POST", `/job/${name}`, {
        contentType: "application/json",
        payload: JSON.stringify(data),
      });
      if (response.status >= 200 && response.status <= 299)
        return { kind: "success", httpStatus: response.status };
      if (response.status === 404) return { kind: "not-found", httpStatus: 404 };
      return { kind: "failure", httpStatus: response.status, error: `app answered ${response.status}` };
    } catch (error) {
      if (error instanceof AppChannelError && error.aborted) return { kind: "abandoned" };
      return { kind: "failure", httpStatus: undefined, error: (error as Error).message };
    }
  };

  const connectApp = async (): Promise<void> => {
    if (channel === undefined) {
      appChannelReady = true;
      resolveReady();
      return;
    }
    await channel.waitForAppPort(config.appPortPollIntervalMs);
    const discovered = await discoverSubscriptions(channel, config.pubsubNames);
    subscriptions = discovered.subscriptions;
    for (const error of discovered.errors) {
      discoveryErrors.push(error);
      log("error", error);
    }
    for (const subscription of subscriptions) {
      detachers.push(
        broker.internals.pubsub.attach(
          createSubscriptionConsumer({
            appId,
            sidecarId,
            subscription,
            channel,
            now: () => new Date(),
            forwardToDeadLetter,
            record: recordDelivery,
          }),
        ),
      );
    }
    detachers.push(broker.internals.scheduler.attach({ appId, sidecarId, trigger: triggerJob }));
    appChannelReady = true;
    log("info", `app channel ready with ${subscriptions.length} subscription(s)`);
    resolveReady();
  };

  timers.after(config.startDelayMs, () => {
    outboundReady = true;
    connectApp().catch((error: unknown) => {
      if (!stopController.signal.aborted) log("error", `app channel failed: ${(error as Error).message}`);
      rejectReady(error as Error);
    });
  });

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      stopController.abort();
      timers.clearAll();
      for (const detach of detachers.splice(0)) detach();
      rejectReady(new Error(`sidecar ${sidecarId} stopped before its app channel was ready`));
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    })();
    return stopping;
  };

  return {
    appId,
    sidecarId,
    url: `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${port}`,
    port,
    ready: () => readyPromise,
    subscriptions: () => subscriptions.map(toView),
    deliveries: () => [...deliveryLog],
    errors: () => [...discoveryErrors],
    jobs: () => broker.internals.scheduler.list(appId),
    jobTriggers: () => broker.internals.scheduler.triggers(appId),
    stop,
  };
}

async function discoverSubscriptions(
  channel: AppChannel,
  pubsubNames: readonly string[],
): Promise<{ subscriptions: readonly Subscription[]; errors: readonly string[] }> {
  let response;
  try {
    response = await channel.request("GET", "/dapr/subscribe");
  } catch (error) {
    if (error instanceof AppChannelError && error.aborted) throw error;
    return { subscriptions: [], errors: [`GET /dapr/subscribe failed: ${(error as Error).message}`] };
  }
  // An app without programmatic subscriptions may answer 404; daprd treats that as "none".
  if (response.status === 404) return { subscriptions: [], errors: [] };
  if (response.status < 200 || response.status > 299) {
    return { subscriptions: [], errors: [`GET /dapr/subscribe answered ${response.status}`] };
  }
  let body: unknown;
  try {
    body = response.body.trim() === "" ? [] : JSON.parse(response.body);
  } catch (error) {
    return {
      subscriptions: [],
      errors: [`GET /dapr/subscribe returned invalid JSON: ${(error as Error).message}`],
    };
  }
  return parseSubscriptions(body, pubsubNames);
}

function toView(subscription: Subscription): SubscriptionView {
  return {
    pubsubName: subscription.pubsubName,
    topic: subscription.topic,
    rules: subscription.rules.map((rule) => ({ match: rule.match?.source, path: rule.path })),
    deadLetterTopic: subscription.deadLetterTopic,
    metadata: subscription.metadata,
  };
}

function defaultLogger(sidecarId: string): SidecarLogger {
  const shown: ReadonlySet<SidecarLogLevel> = new Set(["warn", "error"]);
  return (level, message) => {
    if (shown.has(level)) console.error(`[dapr-stand-in ${sidecarId}] ${level}: ${message}`);
  };
}

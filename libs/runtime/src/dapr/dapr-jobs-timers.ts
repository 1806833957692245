import type { Logger } from "../logger.ts";
import type { RecurringTimer, TimerHandler, Timers } from "../ports/index.ts";
import type { DaprAppServer } from "./dapr-app-server.ts";
import type { DaprJobFailurePolicy, DaprJobsClient } from "./dapr-jobs-client.ts";
import type { DeliverLater, PublishNow } from "./dapr-message-bus.ts";
import type { DaprStateStore } from "./dapr-state-store.ts";
import { delayedEnvelopeSchema, deliveryJobName, DELIVERY_JOB_PREFIX } from "./delayed-envelope.ts";
import { createGuardedTick } from "./guarded-tick.ts";
import { retryInBackground } from "./retry-in-background.ts";

/**
 * How often the Scheduler re-triggers a delayed delivery whose publish failed. Without an explicit
 * policy Dapr gives up after 3 retries 1 s apart (go-etcd-cron's default), and the message (a retry
 * or poll check) is lost while the broker is briefly down, leaving its step pending for good. So a
 * delivery job retries at a constant interval, unbounded, until the publish succeeds.
 */
export const DEFAULT_DELIVERY_RETRY_INTERVAL_MS = 5_000;

/**
 * A duration as daprd reads `failurePolicy.constant.interval`: the job body is parsed with protojson
 * (dapr/dapr pkg/api/http/universal.go), where the field is a google.protobuf.Duration, whose JSON
 * form is seconds with an `s` ("5s", "0.2s"); a Go duration such as "5000ms" is refused with 400
 * ERR_MALFORMED_REQUEST. https://protobuf.dev/programming-guides/json/ (Duration).
 */
export function protobufDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`not a duration: ${ms} ms`);
  const whole = Math.round(ms);
  const seconds = Math.floor(whole / 1000);
  const millis = whole % 1000;
  return millis === 0 ? `${seconds}s` : `${seconds}.${String(millis).padStart(3, "0").replace(/0+$/, "")}s`;
}

export interface DaprJobsTimers extends Timers {
  /** For the Dapr bus: a future `deliverAt` becomes a one-shot job that publishes it then. */
  readonly deliverLater: DeliverLater;
  /**
   * Gives the delivery triggers the bus to publish with. Called at boot, before the app server
   * listens: after a restart, a job scheduled by an earlier process may fire at once.
   */
  attachPublisher(publishNow: PublishNow): void;
}

/**
 * Timers on the Dapr Jobs API (the Dapr Scheduler service): a recurring timer is a job with
 * `schedule: "@every Ns"`; a delayed message (poll check, retry check) is a one-shot job with a
 * `dueTime` whose trigger publishes it. Jobs are at-least-once and may fire late, so the triggers
 * are idempotent: recurring runs go through the guarded tick, delayed messages carry their
 * message id, which consumers deduplicate.
 */
export function createDaprJobsTimers(options: {
  readonly jobs: DaprJobsClient;
  readonly app: DaprAppServer;
  readonly state: DaprStateStore;
  readonly logger: Logger;
  /** Interval between re-triggers of a failed delayed delivery (tests shorten it). */
  readonly deliveryRetryIntervalMs?: number;
}): DaprJobsTimers {
  const { jobs, app, state } = options;
  const deliveryFailurePolicy: DaprJobFailurePolicy = {
    constant: {
      interval: protobufDuration(options.deliveryRetryIntervalMs ?? DEFAULT_DELIVERY_RETRY_INTERVAL_MS),
    },
  };
  const logger = options.logger.child({ component: "dapr-jobs" });
  const abort = new AbortController();
  const ticks: Array<{ idle(): Promise<void> }> = [];
  const registrations: Array<Promise<void>> = [];
  let publishNow: PublishNow | undefined;

  app.onJobs(DELIVERY_JOB_PREFIX, async (jobName, data) => {
    const parsed = delayedEnvelopeSchema.safeParse(data);
    if (!parsed.success) {
      // Retrying cannot repair it; a 2xx stops the Scheduler from firing it again.
      logger.error(
        { job: jobName, reason: "message.invalid" },
        "delayed delivery job without a message: ignored",
      );
      return;
    }
    if (publishNow === undefined) throw new Error("No bus is attached to the delayed deliveries yet");
    await publishNow(parsed.data);
  });

  return {
    async scheduleRecurring(timer: RecurringTimer, handler: TimerHandler) {
      const tick = createGuardedTick({ state, logger, ...timer, handler });
      ticks.push(tick);
      app.onJobs(timer.name, async () => {
        // Answer Dapr at once; the tick may run for longer than the trigger's timeout.
        void tick
          .run(new Date())
          .catch((error: unknown) =>
            logger.warn({ err: error, timer: timer.name }, "timer could not reach the state store"),
          );
      });
      // Scheduling waits for the sidecar; the service's start must not (see retryInBackground).
      registrations.push(
        retryInBackground({
          what: `schedule job ${timer.name}`,
          logger,
          signal: abort.signal,
          attempt: () =>
            jobs.schedule(timer.name, {
              schedule: `@every ${timer.everySeconds}s`,
              overwrite: true,
              // Never without data: daprd 1.16.0–1.18.2 cannot build the HTTP trigger of a job whose
              // data is empty and counts every trigger as failed, so the app is never called
              // (dapr/dapr v1.18.3, "Fix jobs scheduled over HTTP without data failing to deliver").
              data: { timer: timer.name },
            }),
        }),
      );
    },
    attachPublisher(publish) {
      publishNow = publish;
    },
    async deliverLater(message) {
      await jobs.schedule(deliveryJobName(message), {
        dueTime: message.deliverAt.toISOString(),
        overwrite: true,
        failurePolicy: deliveryFailurePolicy,
        data: { id: message.id, topic: message.topic, properties: message.properties, body: message.body },
      });
    },
    async stop() {
      abort.abort();
      await Promise.allSettled(registrations);
      await Promise.all(ticks.map((tick) => tick.idle()));
    },
  };
}

import {
  DeliveryDeferredError,
  workerJobsSubscription,
  type IdempotencyStore,
  type Logger,
  type MessageBus,
} from "@matoolkit/runtime";
import { createConcurrencyLimiter } from "./concurrency-limiter.ts";
import type { FunctionRegistry } from "./functions/function-registry.ts";
import { handleJobDelivery } from "./handle-job-delivery.ts";
import { createIdleMonitor } from "./idle-exit.ts";
import type { TenantClients } from "./tenant/tenant-clients.ts";
import type { ThrottleRetryPolicy } from "./throttle-retry.ts";

export interface WorkerServiceOptions {
  readonly bus: MessageBus;
  readonly idempotency: IdempotencyStore;
  readonly logger: Logger;
  readonly workerId: string;
  /** Functions running at once in this process. */
  readonly concurrency: number;
  readonly registry: FunctionRegistry;
  readonly jobTimeoutMs: number;
  readonly throttleRetry?: ThrottleRetryPolicy;
  readonly now?: () => Date;
  /** The target tenant's clients, shared by every job; absent: tenant functions fail (tenant.not_configured). */
  readonly tenant?: TenantClients;
  /**
   * 000 "Scale-to-Zero": after this long with no delivery and no running job, `onIdle` is called
   * once (main.ts then shuts down as on SIGTERM). Absent: never.
   */
  readonly idleExitMs?: number;
  readonly onIdle?: () => void;
}

export interface WorkerService {
  /** Takes no new job and resolves once the running ones have finished and published. */
  stop(): Promise<void>;
}

/** Subscription name of a worker (000: `worker-{workerId}`, filtered on `WorkerId`). */
export function workerSubscriptionName(workerId: string): string {
  return workerJobsSubscription(workerId).name;
}

/** 000 "Cloud Worker": consumes the jobs addressed to one WorkerId and publishes their results. */
export async function startWorkerService(options: WorkerServiceOptions): Promise<WorkerService> {
  const logger = options.logger.child({ component: "worker", WorkerId: options.workerId });
  const limiter = createConcurrencyLimiter(options.concurrency);
  const deps = {
    bus: options.bus,
    idempotency: options.idempotency,
    logger,
    workerId: options.workerId,
    registry: options.registry,
    execute: {
      timeoutMs: options.jobTimeoutMs,
      now: options.now,
      throttleRetry: options.throttleRetry,
      tenant: options.tenant,
    },
  };
  let stopping = false;
  const idleExitMs = options.idleExitMs;
  const idle =
    idleExitMs === undefined
      ? undefined
      : createIdleMonitor({
          idleMs: idleExitMs,
          onIdle: () => {
            logger.info(
              { idleExitSeconds: idleExitMs / 1000 },
              "worker idle: no delivery and no running job",
            );
            options.onIdle?.();
          },
        });
  const track = <T>(handle: () => Promise<T>): Promise<T> =>
    idle === undefined ? handle() : idle.track(handle);

  await options.bus.subscribe(
    { ...workerJobsSubscription(options.workerId), concurrency: options.concurrency },
    // The slot is taken before the claim: a job waiting for a slot is not marked as running.
    // A delivery waiting for a slot already makes the worker busy (not idle).
    (delivery) =>
      track(() =>
        limiter.run(async () => {
          // Nothing is claimed yet, so refusing leaves the job to the next start of this worker.
          if (stopping) throw new DeliveryDeferredError("worker is stopping");
          await handleJobDelivery(delivery, deps);
        }),
      ),
  );
  logger.info(
    { concurrency: options.concurrency, jobTimeoutMs: options.jobTimeoutMs, idleExitMs: options.idleExitMs },
    "worker subscribed",
  );

  return {
    async stop() {
      stopping = true;
      idle?.stop();
      await limiter.idle();
      logger.info("worker stopped");
    },
  };
}

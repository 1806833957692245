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
    execute: { timeoutMs: options.jobTimeoutMs, now: options.now, throttleRetry: options.throttleRetry },
  };
  let stopping = false;

  await options.bus.subscribe(
    { ...workerJobsSubscription(options.workerId), concurrency: options.concurrency },
    // The slot is taken before the claim: a job waiting for a slot is not marked as running.
    (delivery) =>
      limiter.run(async () => {
        // Nothing is claimed yet, so refusing leaves the job to the next start of this worker.
        if (stopping) throw new DeliveryDeferredError("worker is stopping");
        await handleJobDelivery(delivery, deps);
      }),
  );
  logger.info({ concurrency: options.concurrency, jobTimeoutMs: options.jobTimeoutMs }, "worker subscribed");

  return {
    async stop() {
      stopping = true;
      await limiter.idle();
      logger.info("worker stopped");
    },
  };
}

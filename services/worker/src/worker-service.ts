import {
  DeliveryDeferredError,
  processMetrics,
  workerJobsSubscription,
  type IdempotencyStore,
  type Logger,
  type MessageBus,
  type Metrics,
} from "@matoolkit/runtime";
import { randomUUID } from "node:crypto";
import { setMaxListeners } from "node:events";
import { hostname } from "node:os";
import { createConcurrencyLimiter } from "./concurrency-limiter.ts";
import type { FunctionRegistry } from "./functions/function-registry.ts";
import { handleJobDelivery } from "./handle-job-delivery.ts";
import { createIdleMonitor } from "./idle-exit.ts";
import { DEFAULT_LEASE_SECONDS } from "./job-lease.ts";
import type { PacingClock } from "./pacing/pacing-clock.ts";
import { createWorkerPacing, type PacingSettings, type WorkerPacingReading } from "./pacing/worker-pacing.ts";
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
  /** Lease on a running job's claim (job-lease.ts); default DEFAULT_LEASE_SECONDS. */
  readonly leaseSeconds?: number;
  /** Claim owner; default: this process (`<workerId>@<host>:<pid>:<random>`). Tests name owners. */
  readonly owner?: string;
  /**
   * Issue 30: job starts per second and calls at once per API, adaptive to throttling
   * (pacing/worker-pacing.ts; MATOOLKIT_RATE_LIMIT, MATOOLKIT_*_MAX_IN_FLIGHT). Absent: not paced.
   */
  readonly pacing?: PacingSettings;
  /** The pacing's clock (tests); default the monotonic system clock. */
  readonly pacingClock?: PacingClock;
  /** Called as each job is let start, with the pacing clock's time (the pacing bench counts them). */
  readonly onJobStart?: (at: number) => void;
  /** Where `/metrics` reads the pacing; default the process's registry. */
  readonly metrics?: Metrics;
}

export interface WorkerService {
  /** Takes no new job and resolves once the running ones have finished and published. */
  stop(): Promise<void>;
  /** The pacing now: job start rate, deliveries waiting, calls in flight per API. */
  pacing(): WorkerPacingReading;
}

/** Subscription name of a worker (000: `worker-{workerId}`, filtered on `WorkerId`). */
export function workerSubscriptionName(workerId: string): string {
  return workerJobsSubscription(workerId).name;
}

/** 000 "Cloud Worker": consumes the jobs addressed to one WorkerId and publishes their results. */
export async function startWorkerService(options: WorkerServiceOptions): Promise<WorkerService> {
  const logger = options.logger.child({ component: "worker", WorkerId: options.workerId });
  // `concurrency` functions at once (the tenant's load). A delivery holds a function slot only
  // while its function runs (handle-job-delivery.ts, functionSlots), so the bus may hand out more
  // deliveries than that: those claiming a job, recording and publishing an outcome, or, while
  // every slot is busy, waiting for one with the job claimed (their claim's lease renewed; on the
  // embedded bus their message stays locked, renewed: another replica cannot take them
  // meanwhile). A paced worker keeps to `concurrency` deliveries, so a slot is free whenever its
  // turn comes, and none waits past MAX_START_WAIT_SECONDS (worker-pacing.ts).
  const functionSlots = createConcurrencyLimiter(options.concurrency);
  const paced = options.pacing?.jobStartsPerSecond !== undefined;
  const deliveriesInFlight = paced ? options.concurrency : 2 * options.concurrency;
  const deliveries = createConcurrencyLimiter(deliveriesInFlight);
  const stopping = new AbortController();
  // Every running job and every delivery waiting out a lease listens to it: dozens at once is
  // normal here, not the listener leak Node's default limit of 10 warns about.
  setMaxListeners(0, stopping.signal);
  const pacing = createWorkerPacing({
    settings: options.pacing ?? {},
    concurrency: options.concurrency,
    ...(options.pacingClock === undefined ? {} : { clock: options.pacingClock }),
    ...(options.onJobStart === undefined ? {} : { onJobStart: options.onJobStart }),
    // Once per storm and per limit (aimd-limit.ts): an operator sees the tenant pushing back.
    onLowered: (what, value) =>
      logger.warn(
        { pacing: what, limit: Math.round(value * 100) / 100, reason: "worker.throttled" },
        what === "job starts"
          ? "the tenant throttles: job starts per second lowered"
          : `the tenant throttles: calls at once to ${what} lowered`,
      ),
  });
  const untrackMetrics = (options.metrics ?? processMetrics()).workerPacing.track(options.workerId, () =>
    pacing.reading(),
  );
  const deps = {
    lease: {
      leaseSeconds: options.leaseSeconds ?? DEFAULT_LEASE_SECONDS,
      // One owner per start: a restarted process must not take its predecessor's claims for its own.
      owner: options.owner ?? `${options.workerId}@${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
    },
    stopping: stopping.signal,
    bus: options.bus,
    idempotency: options.idempotency,
    logger,
    workerId: options.workerId,
    registry: options.registry,
    pacing,
    functionSlots,
    execute: {
      timeoutMs: options.jobTimeoutMs,
      now: options.now,
      throttleRetry: options.throttleRetry,
      tenant: options.tenant === undefined ? undefined : pacing.tenant(options.tenant),
    },
  };
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
    { ...workerJobsSubscription(options.workerId), concurrency: deliveriesInFlight },
    // A delivery waiting for its turn, its claim or a function slot already makes the worker busy.
    (delivery) =>
      track(() =>
        deliveries.run(async () => {
          // Nothing is claimed yet, so refusing leaves the job to the next start of this worker.
          if (stopping.signal.aborted) throw new DeliveryDeferredError("worker is stopping");
          await handleJobDelivery(delivery, deps);
        }),
      ),
  );
  logger.info(
    {
      concurrency: options.concurrency,
      jobTimeoutMs: options.jobTimeoutMs,
      idleExitMs: options.idleExitMs,
      leaseSeconds: deps.lease.leaseSeconds,
      owner: deps.lease.owner,
      pacing: options.pacing,
    },
    "worker subscribed",
  );

  return {
    async stop() {
      stopping.abort();
      idle?.stop();
      await deliveries.idle();
      untrackMetrics();
      pacing.close();
      logger.info("worker stopped");
    },
    pacing: () => pacing.reading(),
  };
}

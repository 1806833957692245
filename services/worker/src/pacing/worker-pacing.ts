import type { TenantClients } from "../tenant/tenant-clients.ts";
import { createAimdLimit, type AimdLimit } from "./aimd-limit.ts";
import {
  createApiPacer,
  pacedTenantClients,
  tenantApis,
  type ApiPacer,
  type ApiPacingReading,
  type TenantApi,
} from "./api-pacer.ts";
import { systemPacingClock, type PacingClock } from "./pacing-clock.ts";
import { createStartPacer } from "./start-pacer.ts";

/** What the operator sets (worker-config.ts: MATOOLKIT_RATE_LIMIT, MATOOLKIT_*_MAX_IN_FLIGHT). */
export interface PacingSettings {
  /** Job starts per second of this worker process; absent: not paced. */
  readonly jobStartsPerSecond?: number;
  /** Calls at once per API from this process; absent: not capped. */
  readonly maxInFlight?: Readonly<Partial<Record<TenantApi, number>>>;
}

/**
 * The longest a delivery waits for its turn to start. It waits inside its handler, its message
 * locked (renewed by the bus while the handler runs), so this bounds how long a job may sit
 * unacknowledged before it even starts: 000's Service Bus lock is 1 minute, and on Dapr the
 * component's handlerTimeoutInSec (300 s) covers the wait and the job together. Guaranteed by
 * construction: at most `concurrency` deliveries wait, and the rate never drops below
 * concurrency / this (worker-config.ts refuses a cap below that).
 */
export const MAX_START_WAIT_SECONDS = 60;

/** How the adaptive limits move (AIMD): halved on throttling, back to the cap within a minute. */
export const pacingTuning = {
  decreaseFactor: 0.5,
  /** From 0 to the cap in this long: from half the cap back to it in half of it. */
  recoverySeconds: 60,
  /** The start rate's floor, as a share of its cap (raised to drain `concurrency` waiters in time). */
  floorShare: 1 / 16,
} as const;

export interface WorkerPacingReading {
  /** Jobs allowed to start since the worker started. */
  readonly jobStarts: number;
  /** Deliveries waiting for their turn to start. */
  readonly waitingToStart: number;
  /** Job starts per second allowed now and the configured cap; null: not paced. */
  readonly startRate: { readonly current: number; readonly cap: number } | null;
  readonly apis: readonly ApiPacingReading[];
}

export interface WorkerPacing {
  /** Waits for this delivery's turn to start its job; rejects with the signal's reason if it aborts. */
  awaitStart(signal: AbortSignal): Promise<void>;
  /** The tenant's ports, each call paced and its throttling fed back. */
  tenant(clients: TenantClients): TenantClients;
  reading(): WorkerPacingReading;
  close(): void;
}

export interface WorkerPacingOptions {
  readonly settings: PacingSettings;
  /** The worker's job slots: the most deliveries that can wait for a turn at once. */
  readonly concurrency: number;
  readonly clock?: PacingClock;
  /** At each job start (the clock's time): the bench measures the start rate with it. */
  readonly onJobStart?: (at: number) => void;
  /** A throttled answer lowered a limit: the job start rate, or an API's in-flight limit. */
  readonly onLowered?: (what: "job starts" | TenantApi, value: number) => void;
}

export function createWorkerPacing(options: WorkerPacingOptions): WorkerPacing {
  const { settings, concurrency } = options;
  const clock = options.clock ?? systemPacingClock;
  const cap = settings.jobStartsPerSecond;
  const startLimit =
    cap === undefined
      ? undefined
      : adaptive(
          cap,
          Math.min(cap, Math.max(cap * pacingTuning.floorShare, concurrency / MAX_START_WAIT_SECONDS)),
        );
  const starts = createStartPacer({
    rate: (now) => (startLimit === undefined ? Number.POSITIVE_INFINITY : startLimit.current(now)),
    clock,
    ...(options.onJobStart === undefined ? {} : { onStart: options.onJobStart }),
  });
  const pacers = Object.fromEntries(
    tenantApis.map((api) => {
      const apiCap = settings.maxInFlight?.[api];
      const limit = apiCap === undefined ? undefined : adaptive(apiCap, 1);
      const pacer = createApiPacer({
        api,
        clock,
        ...(limit === undefined ? {} : { limit }),
        onThrottled: (sentAt, now, lowered) => {
          if (lowered && limit !== undefined) options.onLowered?.(api, limit.current(now));
          if (startLimit?.throttled(sentAt, now) === true) {
            options.onLowered?.("job starts", startLimit.current(now));
          }
        },
      });
      return [api, pacer];
    }),
  ) as Record<TenantApi, ApiPacer>;

  return {
    awaitStart: (signal) => starts.acquire(signal),
    tenant: (clients) => pacedTenantClients(clients, pacers),
    reading: () => ({
      jobStarts: starts.started,
      waitingToStart: starts.waiting,
      startRate:
        startLimit === undefined
          ? null
          : { current: startLimit.current(clock.now()), cap: startLimit.settings.cap },
      apis: tenantApis.map((api) => pacers[api].reading()),
    }),
    close: () => starts.close(),
  };
}

function adaptive(cap: number, floor: number): AimdLimit {
  return createAimdLimit({
    cap,
    floor,
    decreaseFactor: pacingTuning.decreaseFactor,
    increasePerSecond: cap / pacingTuning.recoverySeconds,
  });
}

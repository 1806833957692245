import { MatoolkitError, reasonCodes } from "@matoolkit/domain";
import type { IdempotencyStore, Logger } from "@matoolkit/runtime";

/** How a worker holds its job claims (see IdempotencyStore: leases). */
export interface LeaseSettings {
  /** A claim not renewed for this long is lost to the next worker that receives the job. */
  readonly leaseSeconds: number;
  /** This process: a restarted worker is a new owner, so it can take over its own old claims. */
  readonly owner: string;
}

export const DEFAULT_LEASE_SECONDS = 30;

/** Renewals per lease: two may fail (a slow or briefly unreachable database) before it runs out. */
const RENEWALS_PER_LEASE = 3;

/**
 * After a failed renewal, the next try comes this soon (or at the usual interval, if sooner): once
 * the database is back, the lease must be ours again before a redelivery can take the claim over.
 */
const RENEWAL_RETRY_MS = 1000;

export interface HeldLease {
  /** Aborted with a `worker.lost` MatoolkitError once another owner holds the claim. */
  readonly lost: AbortSignal;
  /** Stops renewing (the outcome is recorded, or given up); `lost` does not change after it. */
  stop(): void;
}

/**
 * Renews the claim on `key` every third of the lease while the job runs (and while its completion
 * is being recorded). A renewal refused means the claim is no longer ours (it lapsed and another
 * worker took it over): the job is then aborted, so at most the part already done was done twice.
 * A renewal that fails (database unreachable) is not a refusal: the job goes on, and renewing is
 * retried every second until the database answers, because the lease may run out meanwhile and the
 * store lets its owner renew a lapsed claim as long as nobody took it over.
 */
export function holdLease(
  store: IdempotencyStore,
  key: string,
  settings: LeaseSettings,
  log: Logger,
): HeldLease {
  const controller = new AbortController();
  const intervalMs = (settings.leaseSeconds * 1000) / RENEWALS_PER_LEASE;
  let stopped = false;
  let failures = 0;
  let timer: NodeJS.Timeout | undefined;
  // One renewal at a time (each schedules the next): a slow database must not pile them up.
  const schedule = (ms: number): void => {
    if (!stopped) timer = setTimeout(renew, ms);
  };
  const renew = (): void => {
    store.renew(key, settings.owner, settings.leaseSeconds).then(
      (renewed) => {
        // A renewal in flight when the outcome got recorded finds the claim completed: not a loss.
        if (stopped) return;
        if (renewed) {
          if (failures > 0) log.info({ failedRenewals: failures }, "job lease renewed again");
          failures = 0;
          return schedule(intervalMs);
        }
        stopped = true;
        log.warn({ reason: reasonCodes.workerLost }, "job claim taken over by another worker; job aborted");
        controller.abort(
          new MatoolkitError(
            reasonCodes.workerLost,
            "This worker's claim on the job lapsed and was taken over",
          ),
        );
      },
      (error: unknown) => {
        // One line per outage, not one per retry.
        if (failures === 0) log.warn({ err: error }, "job lease renewal failed; retrying");
        failures += 1;
        schedule(Math.min(RENEWAL_RETRY_MS, intervalMs));
      },
    );
  };
  schedule(intervalMs);
  return {
    lost: controller.signal,
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

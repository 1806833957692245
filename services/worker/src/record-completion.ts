import { DeliveryDeferredError, type IdempotencyStore, type Logger } from "@matoolkit/runtime";
import { abortableDelay } from "./abortable-delay.ts";
import { isStoreUnavailable } from "./store-unavailable.ts";

export interface RecordCompletionOptions {
  readonly store: IdempotencyStore;
  readonly key: string;
  /** The outcome exactly as later deliveries must republish it. */
  readonly value: unknown;
  readonly ttlSeconds: number;
  /**
   * How the record is written; by default `store.complete(key, value, ttlSeconds)`. The worker
   * passes the bus's settlement here (the record, the result's publish and the delivery's
   * acknowledgement in one transaction), retried like the plain record: it is all or nothing.
   */
  readonly write?: () => Promise<void>;
  /** Aborted once another owner took the claim over (job-lease.ts): it reports the job now. */
  readonly lost: AbortSignal;
  /** Aborted when the worker stops: give up, leaving the claim for the redelivery to find. */
  readonly stopping?: AbortSignal;
  readonly log: Logger;
  /** First wait between attempts; doubled up to `maxDelayMs`. */
  readonly initialDelayMs?: number;
  readonly maxDelayMs?: number;
}

export type RecordCompletionOutcome = "recorded" | "unrecordable" | "taken_over";

/**
 * Records a finished job as completed, retrying while the store is unreachable (a database
 * restart): a finished job whose completion is not recorded is run again by the next delivery
 * once its lease runs out (issue 11: the database-outage drill's duplicate). The caller keeps
 * renewing the lease meanwhile, so nobody takes the claim over. The wait is short (1 s at most)
 * so the record lands soon after the store is back, before the bus redelivers the job.
 *
 * "unrecordable": the store refused the value itself (retrying cannot help). Throws
 * DeliveryDeferredError when the worker stops first: the delivery is not settled, and its
 * redelivery finds the claim.
 */
export async function recordCompletion(options: RecordCompletionOptions): Promise<RecordCompletionOutcome> {
  const { store, key, value, ttlSeconds, lost, log } = options;
  const initialDelayMs = options.initialDelayMs ?? 100;
  const maxDelayMs = options.maxDelayMs ?? 1000;
  const giveUp = options.stopping === undefined ? lost : AbortSignal.any([lost, options.stopping]);
  for (let attempt = 1; ; attempt++) {
    try {
      await (options.write === undefined ? store.complete(key, value, ttlSeconds) : options.write());
      if (attempt > 1) log.info({ attempts: attempt }, "job recorded as completed once the store was back");
      return "recorded";
    } catch (error) {
      if (!isStoreUnavailable(error)) {
        log.error({ err: error }, "the store refused to record the job as completed");
        return "unrecordable";
      }
      // One line per outage, not one per attempt.
      if (attempt === 1) {
        log.warn({ err: error }, "could not record the job as completed (store unavailable); retrying");
      }
    }
    try {
      await abortableDelay(Math.min(maxDelayMs, initialDelayMs * 2 ** (attempt - 1)), giveUp);
    } catch {
      if (lost.aborted) return "taken_over";
      log.warn({ attempts: attempt }, "worker stopping before the job's completion could be recorded");
      throw new DeliveryDeferredError("worker stopped before the job's completion could be recorded");
    }
  }
}

import {
  InvalidMessageError,
  reasonCodes,
  SecretValues,
  workerJobMessageSchema,
  workerResultEnvelope,
  workerResultMessageSchema,
} from "@matoolkit/domain";
import type { WorkerJobMessage, WorkerResultMessage } from "@matoolkit/domain";
import { DeliveryDeferredError } from "@matoolkit/runtime";
import type {
  ClaimOutcome,
  Delivery,
  IdempotencyStore,
  Logger,
  MessageBus,
  OutgoingMessage,
} from "@matoolkit/runtime";
import { abortableDelay } from "./abortable-delay.ts";
import { executeJob, type ExecuteJobOptions } from "./execute-job.ts";
import type { FunctionRegistry } from "./functions/function-registry.ts";
import type { LimiterSlot } from "./concurrency-limiter.ts";
import { holdLease, type HeldLease, type LeaseSettings } from "./job-lease.ts";
import { recordCompletion } from "./record-completion.ts";

/**
 * How long a JobId is remembered, claimed or completed: the topics' message TTL (000: 7 days), so
 * no redelivery of a job can ever outlive the memory that it already ran.
 */
export const JOB_MEMORY_SECONDS = 7 * 24 * 60 * 60;

export interface JobDeliveryDeps {
  readonly bus: MessageBus;
  readonly idempotency: IdempotencyStore;
  readonly logger: Logger;
  readonly workerId: string;
  readonly registry: FunctionRegistry;
  readonly execute: ExecuteJobOptions;
  readonly lease: LeaseSettings;
  /** Aborted when the worker stops: a delivery waiting on another worker's lease goes back to the bus. */
  readonly stopping?: AbortSignal;
  /** Job start pacing (pacing/worker-pacing.ts): each delivery waits its turn before its claim. */
  readonly pacing?: { awaitStart(signal: AbortSignal): Promise<void> };
  /**
   * The worker's function slots (MATOOLKIT_WORKER_CONCURRENCY): a delivery holds one while its
   * function runs, not while its job is claimed nor while its outcome is recorded and published
   * (issue 29): that bookkeeping loads the database, not the tenant, and a slot held through it
   * left the functions' slots idle for most of a short job. A claimed delivery waiting for a slot
   * holds its claim's lease. Absent: the caller bounds the deliveries itself.
   */
  readonly functionSlots?: { acquire(): Promise<LimiterSlot> };
}

const noSlot: LimiterSlot = { release: () => undefined };

/**
 * One delivery from `worker-jobs`. Returning acknowledges it; throwing (a bus or database error)
 * gets it redelivered. A JobId's function runs at most once, whatever the bus redelivers: a
 * migration step that sent an email or created a user must not do it twice. The one exception is
 * a worker that died mid-job (its claim's lease ran out): the next delivery takes the claim over
 * and runs the function again when it is declared safe to repeat, else reports the job failed as
 * `worker.lost`, so the step follows its retry policy instead of waiting for the stuck-step timeout.
 */
export async function handleJobDelivery(delivery: Delivery, deps: JobDeliveryDeps): Promise<void> {
  const parsed = workerJobMessageSchema.safeParse(delivery.body);
  if (!parsed.success) {
    // Retrying cannot fix a malformed body: the bus dead-letters a non-retriable error at once.
    throw new InvalidMessageError("worker job", parsed.error);
  }
  const job = parsed.data;
  // Parameters and Result carry member PII: only identifiers go into logs.
  const log = deps.logger.child({
    JobId: job.JobId,
    BatchId: job.BatchId,
    StepExecutionId: job.CorrelationData.StepExecutionId,
    IsInitStep: job.CorrelationData.IsInitStep,
    FunctionName: job.FunctionName,
  });
  if (job.WorkerId !== deps.workerId) {
    log.warn({ jobWorkerId: job.WorkerId }, "job addressed to another worker ignored");
    return;
  }

  // A delivery that arrived while the worker began to stop: nothing is claimed yet, so refusing
  // leaves the job whole to the next start of this worker.
  if (deps.stopping?.aborted === true) throw new DeliveryDeferredError("worker is stopping");
  if (deps.pacing !== undefined) await waitForTurn(deps.pacing, deps.stopping);
  const key = `worker-job:${job.JobId}`;
  const claim = await claimJob(key, deps);
  switch (claim.status) {
    case "claimed":
      return runAndPublish(job, key, deps, log, delivery);
    case "completed":
      return republish(claim.value, deps, log);
    case "lost":
      if (deps.registry.isSafeToRepeat(job.FunctionName)) {
        log.warn(
          { previousOwner: claim.previousOwner, reason: reasonCodes.workerLost },
          "job's worker was lost mid-job; the function is safe to repeat: running it again",
        );
        return runAndPublish(job, key, deps, log, delivery);
      }
      return reportLost(job, key, claim, deps, log, delivery);
    case "in_progress":
      // Its owner renewed the lease while we waited: alive and working; it will publish.
      log.warn(
        { claimedAt: claim.claimedAt.toISOString(), owner: claim.owner },
        "job running in another worker (its lease is renewed); not run again",
      );
      return;
    default: {
      const unreachable: never = claim;
      throw new Error(`Unknown claim outcome ${JSON.stringify(unreachable)}`);
    }
  }
}

/**
 * Claims the JobId. A claim in progress may have a live owner, or a dead one whose lease has not
 * yet run out (the bus can redeliver sooner): the lease is waited out once, then the claim
 * decided; a live owner will have renewed it. Looked at every IN_PROGRESS_RECHECK_MS meanwhile:
 * a copy delivered beside the job finds its owner recording the outcome, which takes
 * milliseconds, and republishes it at once instead of waiting the whole lease.
 */
async function claimJob(key: string, deps: JobDeliveryDeps): Promise<ClaimOutcome> {
  const options = { ttlSeconds: JOB_MEMORY_SECONDS, ...deps.lease };
  let claim = await deps.idempotency.claim(key, options);
  if (claim.status !== "in_progress") return claim;
  const deadline = leaseWaitDeadline(claim.leaseExpiresAt, deps.lease.leaseSeconds);
  do {
    await waitUntil(Math.min(deadline, Date.now() + IN_PROGRESS_RECHECK_MS), deps.stopping);
    claim = await deps.idempotency.claim(key, options);
  } while (claim.status === "in_progress" && Date.now() < deadline);
  return claim;
}

async function runAndPublish(
  job: WorkerJobMessage,
  key: string,
  deps: JobDeliveryDeps,
  log: Logger,
  delivery: Delivery,
): Promise<void> {
  // Held from the claim until the outcome is recorded: through the wait for a function slot
  // (which may outlast a lease while long functions hold every slot), the function, and the
  // record, which waits while the database is down; a lapsed claim would be taken over and the
  // job run again.
  const lease = holdLease(deps.idempotency, key, deps.lease, log);
  try {
    let result: WorkerResultMessage;
    const slot = deps.functionSlots === undefined ? noSlot : await deps.functionSlots.acquire();
    if (lease.lost.aborted) {
      // Taken over while this delivery waited for a slot (its renewals failed for a lease): the
      // new owner runs or reports the job; starting it here too would run it twice.
      slot.release();
      log.warn({ reason: reasonCodes.workerLost }, "job claim was taken over before it started; not run");
      return;
    }
    try {
      log.info("job started");
      result = await executeJob(job, deps.registry, { ...deps.execute, signal: lease.lost });
    } finally {
      slot.release();
    }
    log.info(
      {
        Status: result.Status,
        ResultType: result.ResultType,
        DurationMs: result.DurationMs,
        ...(result.Error
          ? {
              errorType: result.Error.Type,
              // Sanitized, yet it may quote what the function was given (a password it was to
              // set): every param value is member data or a secret, masked as reads mask them.
              errorMessage: SecretValues.of(Object.values(job.Parameters)).maskText(result.Error.Message),
              attempts: result.Error.Attempts,
            }
          : {}),
      },
      "job finished",
    );
    await recordThenPublish(key, result, lease, deps, log, delivery);
  } finally {
    lease.stop();
  }
}

/** A job cut off by its worker's death, whose function may not run twice: failed as worker.lost. */
async function reportLost(
  job: WorkerJobMessage,
  key: string,
  claim: Extract<ClaimOutcome, { status: "lost" }>,
  deps: JobDeliveryDeps,
  log: Logger,
  delivery: Delivery,
): Promise<void> {
  log.warn(
    {
      previousOwner: claim.previousOwner,
      claimedAt: claim.claimedAt.toISOString(),
      reason: reasonCodes.workerLost,
    },
    "job's worker was lost mid-job; reported failed (the function is not declared safe to repeat)",
  );
  const now = new Date();
  const result: WorkerResultMessage = {
    JobId: job.JobId,
    Status: "Failure",
    ResultType: "Null",
    Result: null,
    Error: {
      Message: `The worker running this job stopped before finishing it (claimed ${claim.claimedAt.toISOString()}); it may have been partly done`,
      Type: reasonCodes.workerLost,
      IsThrottled: false,
      Attempts: 1,
    },
    DurationMs: Math.max(0, now.getTime() - claim.claimedAt.getTime()),
    Timestamp: now.toISOString(),
    CorrelationData: job.CorrelationData,
  };
  // The claim is ours now (taken over): hold it while the outcome is recorded.
  const lease = holdLease(deps.idempotency, key, deps.lease, log);
  try {
    await recordThenPublish(key, result, lease, deps, log, delivery);
  } finally {
    lease.stop();
  }
}

/**
 * The outcome is recorded before it is published, so the orchestrator only ever hears an outcome
 * that every later delivery of the job republishes as is. While the store is down the record is
 * retried (record-completion.ts); a worker stopping meanwhile throws, leaving the delivery unsettled.
 *
 * Where the bus offers it (embedded, sharing the idempotency store's database), the record, the
 * publish and the delivery's acknowledgement are one transaction (`settleDelivery`; issue 29):
 * the same order of facts — nobody hears an outcome that is not recorded — in one round trip.
 */
async function recordThenPublish(
  key: string,
  result: WorkerResultMessage,
  lease: HeldLease,
  deps: JobDeliveryDeps,
  log: Logger,
  delivery: Delivery,
): Promise<void> {
  let published = false;
  const settle = deps.bus.settleDelivery;
  const write =
    settle === undefined
      ? undefined
      : async (): Promise<void> => {
          published = await settle({
            delivery,
            outcome: { key, value: result, ttlSeconds: JOB_MEMORY_SECONDS },
            // Published with the record of the outcome, in its transaction: once. (A copy of
            // the job finds the record and republishes it; the orchestrator ignores a result
            // for a step no longer waiting for it.)
            messages: [{ ...resultMessage(result, deps), onceByTransaction: true }],
          });
          if (!published) await deps.idempotency.complete(key, result, JOB_MEMORY_SECONDS);
        };
  const outcome = lease.lost.aborted
    ? "taken_over"
    : await recordCompletion({
        store: deps.idempotency,
        key,
        value: result,
        ttlSeconds: JOB_MEMORY_SECONDS,
        ...(write === undefined ? {} : { write }),
        lost: lease.lost,
        stopping: deps.stopping,
        log,
      });
  // Recorded (or given up): a renewal now would find the claim completed and read it as lost.
  lease.stop();
  switch (outcome) {
    case "recorded":
      return published ? undefined : publishResult(result, deps);
    case "unrecordable":
      // Retrying cannot store it; the orchestrator must still hear the outcome.
      log.warn("publishing the job's result without a record of its completion");
      return publishResult(result, deps);
    case "taken_over":
      // The worker that took the claim over reports the job (worker.lost, or its own run).
      log.warn(
        { reason: reasonCodes.workerLost },
        "job claim was taken over; this run's outcome is not reported",
      );
      return;
    default: {
      const unreachable: never = outcome;
      throw new Error(`Unknown record outcome ${String(unreachable)}`);
    }
  }
}

/** When a lease seen now has surely run out (a little after it), at most one lease from now. */
function leaseWaitDeadline(leaseExpiresAt: Date, leaseSeconds: number): number {
  return Math.min(leaseExpiresAt.getTime(), Date.now() + leaseSeconds * 1000) + LEASE_EXPIRY_MARGIN_MS;
}

/** Sleeps until `until` (epoch ms); a stop ends the wait with DeliveryDeferredError. */
async function waitUntil(until: number, stopping: AbortSignal | undefined): Promise<void> {
  try {
    await abortableDelay(Math.max(0, until - Date.now()), stopping ?? new AbortController().signal);
  } catch {
    // Nothing is claimed by this delivery: the bus gives the job to the next start of the worker.
    throw new DeliveryDeferredError("worker is stopping");
  }
}

/**
 * Issue 30: the delivery waits for its turn to start BEFORE claiming the job. Its message stays
 * locked meanwhile (the bus renews the lock while the handler runs; nothing is acknowledged
 * before the job has run), the wait is bounded (MAX_START_WAIT_SECONDS), and a stop refuses it
 * with nothing claimed, so the job goes back to the bus whole: never lost, never run twice.
 */
async function waitForTurn(
  pacing: NonNullable<JobDeliveryDeps["pacing"]>,
  stopping: AbortSignal | undefined,
): Promise<void> {
  try {
    await pacing.awaitStart(stopping ?? new AbortController().signal);
  } catch {
    throw new DeliveryDeferredError("worker is stopping");
  }
}

/** Clocks of the worker and the store may differ a little. */
const LEASE_EXPIRY_MARGIN_MS = 500;
/** How often a delivery waiting out another owner's lease looks whether the job has finished. */
const IN_PROGRESS_RECHECK_MS = 1000;

async function republish(stored: unknown, deps: JobDeliveryDeps, log: Logger): Promise<void> {
  const parsed = workerResultMessageSchema.safeParse(stored);
  if (!parsed.success) {
    log.error(
      { reason: reasonCodes.unexpectedException },
      "stored result of a completed job is unreadable; not republished",
    );
    return;
  }
  // The earlier delivery may have died between recording and publishing: publish again. Where
  // the first publish did go out, the copy is dropped by the bus's duplicate detection (Service
  // Bus) or reaches the orchestrator, which ignores a result for a step no longer waiting on it.
  log.info("job already completed; republishing its stored result");
  await publishResult(stored as WorkerResultMessage, deps);
}

function publishResult(result: WorkerResultMessage, deps: JobDeliveryDeps): Promise<void> {
  return deps.bus.publish(resultMessage(result, deps));
}

function resultMessage(result: WorkerResultMessage, deps: JobDeliveryDeps): OutgoingMessage {
  const { messageId, ...envelope } = workerResultEnvelope(result, deps.workerId);
  return { id: messageId, ...envelope };
}

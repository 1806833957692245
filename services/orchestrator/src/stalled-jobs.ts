import { getPhase, listWaitingInits, listWaitingSteps } from "@matoolkit/db";
import { DEFAULT_DEDUPE_WINDOW_SECONDS } from "@matoolkit/runtime";
import { loadBatchInfo } from "./batch-info.ts";
import type { HandlerScope, OrchestratorContext } from "./context.ts";
import { lockExecution, type ExecutionRef } from "./executions.ts";
import { sweepCandidates, sweepEach } from "./execution-sweep.ts";
import { resendWorkerJob } from "./outgoing.ts";
import { DEFAULT_STEP_TIMEOUT_SECONDS } from "./stuck-executions.ts";

/**
 * How long a dispatched execution waits for its result before its job is sent again, and again
 * after each such interval while it still waits. Longer than the bus's dedupe windows (10
 * minutes: the Dapr adapter's publish and delivery records, Service Bus duplicate detection), so
 * a worker's republished result is not dropped as a copy either; short against the default
 * timeout (1 h), which is what a lost job costs without it.
 */
export const RESEND_AFTER_SECONDS = 15 * 60;
/** Per call and table; the next reconcile pass takes the rest. */
const MAX_PER_PASS = 500;

/**
 * Stalled jobs: a step or init `dispatched` for RESEND_AFTER_SECONDS or more with no result, and
 * still within its timeout, gets its job published again under a new message id per interval
 * (`job:<JobId>:resend-<n>`), once per interval: the reconcile passes of an interval's first
 * 10 minutes (the bus's dedupe window) publish the same id, which the bus drops; later ones
 * publish nothing. A job message can be lost between the orchestrator's commit and the worker: a
 * broker that acknowledged it without a delivery (real daprd's HTTP app channel does, at times,
 * for a delivery whose connection broke: `npm run drill dapr-app-channel`, ARCHITECTURE.md "Hot
 * path", sixth round), a Redis failover that drops entries not yet replicated, a purged queue.
 * Without this the execution waits out its whole timeout and then fails with worker.timeout (a
 * retry, or the member's rollback) for a job that never ran.
 *
 * Safe whatever became of the first message: the worker runs a JobId once (its idempotency key),
 * so a copy of a job that ran republishes the stored result (ignored if the result came), one
 * running elsewhere is left to it, and a copy of a job that never arrived runs it. Called by the
 * batch workflow's periodic reconcile with timeOutStuckExecutions. Returns how many it published
 * (a round's id again included).
 */
export async function resendStalledJobs(ctx: OrchestratorContext, now: Date): Promise<number> {
  const options = {
    waitingSec: RESEND_AFTER_SECONDS,
    defaultTimeoutSec: DEFAULT_STEP_TIMEOUT_SECONDS,
    limit: MAX_PER_PASS,
  };
  const [steps, inits] = await Promise.all([
    listWaitingSteps(ctx.db, now, options),
    listWaitingInits(ctx.db, now, options),
  ]);
  return sweepEach(
    ctx,
    sweepCandidates(steps, inits),
    (scope, candidate) => resend(scope, { ...candidate, now }),
    "stalled job not re-sent",
  );
}

async function resend(
  scope: HandlerScope,
  args: { ref: ExecutionRef; jobId: string | null; now: Date },
): Promise<boolean> {
  const { trx } = scope;
  const { ref } = args;
  // Locked and re-checked: since the scan, its result may have come or a retry re-dispatched it.
  const row = await lockExecution(trx, ref);
  if (row === undefined || row.status !== "dispatched" || row.jobId !== args.jobId || row.jobId === null) {
    return false;
  }
  if (row.dispatchedAt === null) return false;
  const waited = args.now.getTime() - row.dispatchedAt.getTime();
  const round = Math.floor(waited / (RESEND_AFTER_SECONDS * 1000));
  if (round < 1) return false;
  // Passes within the bus's dedupe window of the round's start publish the same id again, which
  // the bus drops; later in the round they would not be dropped, so they send nothing: one copy
  // per round (with the default window; a shorter one configured lets a second copy through).
  if (waited - round * RESEND_AFTER_SECONDS * 1000 >= DEFAULT_DEDUPE_WINDOW_SECONDS * 1000) return false;
  const batch = await loadBatchInfo(trx, row.batchId);
  if (batch === undefined) return false;
  const runbookVersion =
    row.runbookVersion ??
    (row.phaseExecutionId === null ? undefined : (await getPhase(trx, row.phaseExecutionId))?.runbookVersion);
  if (runbookVersion === undefined) return false;
  await resendWorkerJob(
    scope,
    {
      ref,
      row: { workerId: row.workerId, functionName: row.functionName, paramsJson: row.paramsJson },
      jobId: row.jobId,
      batchId: batch.id,
      runbook: { runbookName: batch.runbookName, runbookVersion },
    },
    round,
  );
  scope.logger.warn(
    { batchId: batch.id, kind: ref.kind, executionId: ref.id, jobId: row.jobId, round },
    "job sent again: its execution has waited for a result since its dispatch",
  );
  return true;
}

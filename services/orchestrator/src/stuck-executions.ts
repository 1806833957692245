import { listStuckInits, listStuckSteps } from "@matoolkit/db";
import { reasonCodes } from "@matoolkit/domain";
import { loadBatchInfo } from "./batch-info.ts";
import type { HandlerScope, OrchestratorContext } from "./context.ts";
import { sweepCandidates, sweepEach, type SweepCandidate } from "./execution-sweep.ts";
import { lockExecution, transitionExecution } from "./executions.ts";
import { handleFailedExecution } from "./failure.ts";

/** A step without a YAML `timeout` waits this long for its worker's answer (issue 3: 1 h). */
export const DEFAULT_STEP_TIMEOUT_SECONDS = 3600;
/** Per call and table; the next reconcile pass takes the rest. */
const MAX_PER_PASS = 500;

/**
 * Stuck executions (not in 000): a step or init `dispatched` with no result for longer than its
 * timeout (YAML `timeout`, else DEFAULT_STEP_TIMEOUT_SECONDS) as of `now` fails with
 * `worker.timeout` and then goes the way of any failure: retry when it has retries left, else
 * rollback and member failure (steps) or batch failure (init). A worker that died mid-job, or a
 * job or result lost on the way, would otherwise hold its member in that step forever.
 *
 * One indexed query per table finds them; each is failed in its own transaction, re-checked
 * under its row lock, then the completion follow-ups run. A result arriving later carries the
 * old job id and is ignored like any stale result. Called by the batch workflow's periodic
 * reconcile. Returns how many executions it failed.
 */
export async function timeOutStuckExecutions(ctx: OrchestratorContext, now: Date): Promise<number> {
  const options = { defaultTimeoutSec: DEFAULT_STEP_TIMEOUT_SECONDS, limit: MAX_PER_PASS };
  const [steps, inits] = await Promise.all([
    listStuckSteps(ctx.db, now, options),
    listStuckInits(ctx.db, now, options),
  ]);
  return sweepEach(
    ctx,
    sweepCandidates(steps, inits),
    (scope, candidate) => timeOut(scope, { candidate, now }),
    "stuck execution not timed out",
  );
}

async function timeOut(
  scope: HandlerScope,
  args: { candidate: SweepCandidate; now: Date },
): Promise<boolean> {
  const { candidate, now } = args;
  const { trx } = scope;
  const { ref } = candidate;
  // Locked and re-checked: since the scan, a result may have arrived or a retry re-dispatched it.
  const row = await lockExecution(trx, ref);
  if (row === undefined || row.status !== "dispatched" || row.jobId !== candidate.jobId) return false;
  const timeoutSec = row.timeoutSec ?? DEFAULT_STEP_TIMEOUT_SECONDS;
  if (row.dispatchedAt === null || row.dispatchedAt.getTime() + timeoutSec * 1000 >= now.getTime())
    return false;
  const batch = await loadBatchInfo(trx, row.batchId);
  if (batch === undefined) return false;
  const failed = await transitionExecution(trx, ref, "fail", {
    reason: reasonCodes.workerTimeout,
    set: {
      errorCode: reasonCodes.workerTimeout,
      errorMessage: `no result from the worker within ${timeoutSec}s of dispatch`,
      completedAt: now,
    },
  });
  if (failed === undefined) return false;
  scope.logger.warn(
    { batchId: batch.id, kind: ref.kind, executionId: ref.id, jobId: row.jobId, timeoutSec },
    "execution timed out waiting for its worker",
  );
  if (failed.phaseExecutionId !== null) scope.followUps.phaseIds.add(failed.phaseExecutionId);
  await handleFailedExecution(scope, { ref, row: failed, batch });
  return true;
}

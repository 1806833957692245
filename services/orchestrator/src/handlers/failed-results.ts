import { failSteps, phaseIdsOfSteps, retrySteps } from "@matoolkit/db";
import { sanitizeErrorMessage, type WorkerResultMessage } from "@matoolkit/domain";
import { loadBatchInfo, type BatchInfo } from "../batch-info.ts";
import type { HandlerScope } from "../context.ts";
import { fromStep } from "../executions.ts";
import { handleTerminalFailure } from "../failure.ts";
import { sendSelfChecks } from "../outgoing.ts";
import { failureCode } from "./worker-result.ts";

/**
 * 000 ResultProcessor and "Retry Protocol" for a batch of member steps whose worker reported a
 * failure, set-based (issue 29: one by one a failed result took five statements — the
 * execution and its batch read, the fail and retry transitions, its check): ONE guarded `fail`
 * per error code moves every step whose job is still the current one (a stale or duplicate
 * result moves nothing, as one by one), ONE `retry` per attempt number sends the steps with
 * retries left back to `pending`, and ONE publish sends their retry checks. A step with no retry
 * left goes on one by one to its terminal failure (rollback, member failed), as it would alone.
 * `locked` are the results' batches, share-locked by the caller before any execution row.
 * Returns whether a terminal failure ran (it may have moved a member or its steps).
 */
export async function handleFailedStepResults(
  scope: HandlerScope,
  results: readonly WorkerResultMessage[],
  locked: ReadonlyMap<number, BatchInfo>,
): Promise<boolean> {
  if (results.length === 0) return false;
  const { trx } = scope;
  const now = scope.now();
  const failed = await failSteps(
    trx,
    results.map((result) => {
      const code = failureCode(result.Error?.Type ?? null, result.Error?.IsThrottled ?? false);
      return {
        id: result.CorrelationData.StepExecutionId,
        jobId: result.JobId,
        code,
        message: sanitizeErrorMessage(result.Error?.Message ?? "worker reported a failure"),
        result: result.Result ?? null,
        completedAt: now,
      };
    }),
  );
  const moved = new Set(failed.map((step) => step.id));
  const ignored = results
    .map((result) => result.CorrelationData.StepExecutionId)
    .filter((id) => !moved.has(id));
  // A stale or duplicate result changes nothing, but its phase is checked again after commit.
  for (const phaseId of await phaseIdsOfSteps(trx, ignored)) scope.followUps.phaseIds.add(phaseId);
  for (const step of failed) scope.followUps.phaseIds.add(step.phaseExecutionId);

  const retryable = failed.filter((step) => step.maxRetries > 0 && step.retryCount < step.maxRetries);
  const pending = await retrySteps(
    trx,
    retryable.map((step) => ({
      id: step.id,
      retryCount: step.retryCount + 1,
      maxRetries: step.maxRetries,
      retryAfter: new Date(now.getTime() + (step.retryIntervalSec ?? 0) * 1000),
    })),
  );
  await sendSelfChecks(
    scope,
    pending.map((step) => ({
      type: "retry-check",
      ref: { kind: "step", id: step.id },
      at: step.retryAfter ?? now,
      attempt: step.retryCount,
      redriveCount: step.redriveCount,
    })),
  );

  const retried = new Set(pending.map((step) => step.id));
  const terminal = failed.filter((step) => !retried.has(step.id));
  for (const step of terminal) {
    const batch = locked.get(step.batchId) ?? (await loadBatchInfo(trx, step.batchId));
    if (batch === undefined) continue;
    await handleTerminalFailure(scope, { ref: { kind: "step", id: step.id }, row: fromStep(step)!, batch });
  }
  return terminal.length > 0;
}

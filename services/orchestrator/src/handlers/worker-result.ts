import type { ExecutionRow } from "../executions.ts";
import { mergeWorkerData } from "@matoolkit/db";
import {
  executionMachine,
  reasonCodes,
  sanitizeErrorMessage,
  type ExecutionStatus,
  type WorkerResultMessage,
} from "@matoolkit/domain";
import { loadBatchInfo, type BatchInfo } from "../batch-info.ts";
import type { HandlerScope } from "../context.ts";
import { loadExecution, refFromCorrelation, transitionExecution, type ExecutionRef } from "../executions.ts";
import { handleFailedExecution } from "../failure.ts";
import { sendSelfCheck } from "../outgoing.ts";
import { advanceInit, advanceMember } from "../progression.ts";
import { extractOutputs } from "../outputs.ts";

/**
 * 000 ResultProcessor. Guards (000 "Race Condition Safety"): a result whose JobId is not the
 * execution's current job (an earlier attempt, a rollback job) or that arrives for a terminal
 * execution is ignored; status changes are SQL-guarded so concurrent results cannot both win.
 */
export async function handleWorkerResult(scope: HandlerScope, result: WorkerResultMessage): Promise<void> {
  const { trx } = scope;
  const ref = refFromCorrelation(result.CorrelationData.IsInitStep, result.CorrelationData.StepExecutionId);
  const row = await loadExecution(trx, ref);
  if (row === undefined) {
    scope.logger.warn({ jobId: result.JobId }, "result for an execution that does not exist: ignored");
    return;
  }
  if (row.phaseExecutionId !== null) scope.followUps.phaseIds.add(row.phaseExecutionId);
  if (row.jobId !== result.JobId || executionMachine.isTerminal(row.status as ExecutionStatus)) {
    scope.logger.debug(
      { jobId: result.JobId, currentJobId: row.jobId, status: row.status },
      "stale or duplicate result: ignored",
    );
    return;
  }
  const batch = await loadBatchInfo(trx, row.batchId);
  if (batch === undefined) return;
  if (result.Status === "Failure") {
    const error = result.Error;
    const code = failureCode(error?.Type ?? null, error?.IsThrottled ?? false);
    await fail(scope, {
      ref,
      batch,
      code,
      message: error?.Message ?? "worker reported a failure",
      result,
    });
    return;
  }
  if (isIncomplete(result.Result)) {
    await keepPolling(scope, { ref, row, batch, result });
    return;
  }
  const succeeded = await transitionExecution(trx, ref, "succeed", {
    set: { resultJson: result.Result ?? null, completedAt: scope.now() },
    expectedJobId: result.JobId,
  });
  if (succeeded === undefined) return;
  await afterSuccess(scope, { ref, row: succeeded, batch });
}

async function afterSuccess(
  scope: HandlerScope,
  args: { ref: ExecutionRef; row: ExecutionRow; batch: BatchInfo },
): Promise<void> {
  const { ref, row, batch } = args;
  if (ref.kind === "init") {
    await advanceInit(scope, { batch, runbookVersion: row.runbookVersion ?? 0 });
    return;
  }
  if (row.batchMemberId === null || row.phaseExecutionId === null) return;
  const outputs = await extractOutputs(scope, { row, batch });
  if (Object.keys(outputs).length > 0) await mergeWorkerData(scope.trx, row.batchMemberId, outputs);
  await advanceMember(scope, { memberId: row.batchMemberId, phaseExecutionId: row.phaseExecutionId });
}

/** 000 "Polling Protocol" step 4: `{complete: false}` → polling, then a poll-check after the interval. */
async function keepPolling(
  scope: HandlerScope,
  args: { ref: ExecutionRef; row: ExecutionRow; batch: BatchInfo; result: WorkerResultMessage },
): Promise<void> {
  const { ref, row } = args;
  const { trx } = scope;
  if (!row.isPollStep || row.pollIntervalSec === null) {
    await fail(scope, {
      ...args,
      code: reasonCodes.workerError,
      message: "worker answered {complete: false} but the step has no poll configuration",
    });
    return;
  }
  const now = scope.now();
  if (row.status === "dispatched") {
    const polling = await transitionExecution(trx, ref, "start_polling", {
      set: { pollStartedAt: now, lastPolledAt: now },
      expectedJobId: args.result.JobId,
    });
    if (polling === undefined) return;
  }
  const at = new Date(now.getTime() + row.pollIntervalSec * 1000);
  await sendSelfCheck(scope, {
    type: "poll-check",
    ref,
    at,
    attempt: row.pollCount + 1,
    redriveCount: row.redriveCount,
  });
}

async function fail(
  scope: HandlerScope,
  args: {
    ref: ExecutionRef;
    batch: BatchInfo;
    code: string;
    message: string;
    result: WorkerResultMessage;
  },
): Promise<void> {
  const failed = await transitionExecution(scope.trx, args.ref, "fail", {
    expectedJobId: args.result.JobId,
    reason: args.code,
    set: {
      errorCode: args.code,
      errorMessage: sanitizeErrorMessage(args.message),
      resultJson: args.result.Result ?? null,
      completedAt: scope.now(),
    },
  });
  if (failed === undefined) return;
  await handleFailedExecution(scope, { ref: args.ref, row: failed, batch: args.batch });
}

export function isIncomplete(result: unknown): boolean {
  return (
    typeof result === "object" && result !== null && (result as { complete?: unknown }).complete === false
  );
}

/**
 * How a result counts in `matoolkit_step_results_total`: its outcome and the stable reason code
 * the orchestrator stores for it (`none` for a success). Never the worker's message text.
 */
export function resultOutcome(result: WorkerResultMessage): {
  readonly outcome: "succeeded" | "failed" | "incomplete";
  readonly reasonCode: string;
} {
  if (result.Status === "Failure") {
    return {
      outcome: "failed",
      reasonCode: failureCode(result.Error?.Type ?? null, result.Error?.IsThrottled ?? false),
    };
  }
  return { outcome: isIncomplete(result.Result) ? "incomplete" : "succeeded", reasonCode: "none" };
}

/** Workers report .NET exception types or our reason codes; we store a stable reason code. */
export function failureCode(type: string | null, throttled: boolean): string {
  // The worker's own code says most (worker.throttled, graph.not_found…); a .NET exception type
  // from the PowerShell worker is not a code, so fall back on what IsThrottled tells.
  if (type !== null && /^[a-z_]+(\.[a-z_]+)+$/.test(type)) return type;
  if (throttled) return reasonCodes.graphThrottled;
  return reasonCodes.workerError;
}

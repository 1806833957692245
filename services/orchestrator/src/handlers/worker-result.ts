import type { ExecutionRow } from "../executions.ts";
import { mergeWorkerData, type Db } from "@matoolkit/db";
import {
  executionMachine,
  reasonCodes,
  sanitizeErrorMessage,
  type ExecutionStatus,
  type WorkerResultMessage,
} from "@matoolkit/domain";
import { loadBatchInfo, type BatchInfo } from "../batch-info.ts";
import type { FollowUps, OrchestratorContext } from "../context.ts";
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
export async function handleWorkerResult(
  trx: Db,
  ctx: OrchestratorContext,
  result: WorkerResultMessage,
  followUps: FollowUps,
): Promise<void> {
  const ref = refFromCorrelation(result.CorrelationData.IsInitStep, result.CorrelationData.StepExecutionId);
  const row = await loadExecution(trx, ref);
  if (row === undefined) {
    ctx.logger.warn({ jobId: result.JobId }, "result for an execution that does not exist: ignored");
    return;
  }
  if (row.phaseExecutionId !== null) followUps.phaseIds.add(row.phaseExecutionId);
  if (row.jobId !== result.JobId || executionMachine.isTerminal(row.status as ExecutionStatus)) {
    ctx.logger.debug(
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
    await fail(trx, ctx, {
      ref,
      batch,
      followUps,
      code,
      message: error?.Message ?? "worker reported a failure",
      result,
    });
    return;
  }
  if (isIncomplete(result.Result)) {
    await keepPolling(trx, ctx, { ref, row, batch, followUps, result });
    return;
  }
  const succeeded = await transitionExecution(trx, ref, "succeed", {
    set: { resultJson: result.Result ?? null, completedAt: ctx.now() },
    expectedJobId: result.JobId,
  });
  if (succeeded === undefined) return;
  await afterSuccess(trx, ctx, { ref, row: succeeded, batch, followUps });
}

async function afterSuccess(
  trx: Db,
  ctx: OrchestratorContext,
  args: { ref: ExecutionRef; row: ExecutionRow; batch: BatchInfo; followUps: FollowUps },
): Promise<void> {
  const { ref, row, batch, followUps } = args;
  if (ref.kind === "init") {
    await advanceInit(trx, ctx, { batch, runbookVersion: row.runbookVersion ?? 0, followUps });
    return;
  }
  if (row.batchMemberId === null || row.phaseExecutionId === null) return;
  const outputs = await extractOutputs(trx, ctx, { row, batch });
  if (Object.keys(outputs).length > 0) await mergeWorkerData(trx, row.batchMemberId, outputs);
  await advanceMember(trx, ctx, {
    batch,
    phaseExecutionId: row.phaseExecutionId,
    memberId: row.batchMemberId,
    followUps,
  });
}

/** 000 "Polling Protocol" step 4: `{complete: false}` → polling, then a poll-check after the interval. */
async function keepPolling(
  trx: Db,
  ctx: OrchestratorContext,
  args: {
    ref: ExecutionRef;
    row: ExecutionRow;
    batch: BatchInfo;
    followUps: FollowUps;
    result: WorkerResultMessage;
  },
): Promise<void> {
  const { ref, row } = args;
  if (!row.isPollStep || row.pollIntervalSec === null) {
    await fail(trx, ctx, {
      ...args,
      code: reasonCodes.workerError,
      message: "worker answered {complete: false} but the step has no poll configuration",
    });
    return;
  }
  const now = ctx.now();
  if (row.status === "dispatched") {
    const polling = await transitionExecution(trx, ref, "start_polling", {
      set: { pollStartedAt: now, lastPolledAt: now },
      expectedJobId: args.result.JobId,
    });
    if (polling === undefined) return;
  }
  const at = new Date(now.getTime() + row.pollIntervalSec * 1000);
  await sendSelfCheck(trx, { type: "poll-check", ref, at, attempt: row.pollCount + 1 });
}

async function fail(
  trx: Db,
  ctx: OrchestratorContext,
  args: {
    ref: ExecutionRef;
    batch: BatchInfo;
    followUps: FollowUps;
    code: string;
    message: string;
    result: WorkerResultMessage;
  },
): Promise<void> {
  const failed = await transitionExecution(trx, args.ref, "fail", {
    expectedJobId: args.result.JobId,
    reason: args.code,
    set: {
      errorCode: args.code,
      errorMessage: sanitizeErrorMessage(args.message),
      resultJson: args.result.Result ?? null,
      completedAt: ctx.now(),
    },
  });
  if (failed === undefined) return;
  await handleFailedExecution(trx, ctx, {
    ref: args.ref,
    row: failed,
    batch: args.batch,
    followUps: args.followUps,
  });
}

function isIncomplete(result: unknown): boolean {
  return (
    typeof result === "object" && result !== null && (result as { complete?: unknown }).complete === false
  );
}

/** Workers report .NET exception types or our reason codes; we store a stable reason code. */
function failureCode(type: string | null, throttled: boolean): string {
  // The worker's own code says most (worker.throttled, graph.not_found…); a .NET exception type
  // from the PowerShell worker is not a code, so fall back on what IsThrottled tells.
  if (type !== null && /^[a-z_]+(\.[a-z_]+)+$/.test(type)) return type;
  if (throttled) return reasonCodes.graphThrottled;
  return reasonCodes.workerError;
}

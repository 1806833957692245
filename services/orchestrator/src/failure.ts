import type { ExecutionRow } from "./executions.ts";
import {
  cancelOpenStepsOfMember,
  countBatchMemberEnds,
  getMember,
  getPhase,
  listInitsByBatch,
  recordRollbackStep,
  transitionBatch,
  transitionInit,
  transitionMember,
  type RollbackStepRecord,
} from "@matoolkit/db";
import { reasonCodes, resolveStep, TemplateResolutionError } from "@matoolkit/domain";
import { variablesFor, type BatchInfo } from "./batch-info.ts";
import { batchEnd } from "./completion.ts";
import { withItem } from "./dispatch.ts";
import { notifyBatchEnded, notifyMemberFailed } from "./notifications/notify.ts";
import type { HandlerScope } from "./context.ts";
import { transitionExecution, type ExecutionRef } from "./executions.ts";
import { sendSelfCheck, sendUntrackedJob } from "./outgoing.ts";

/**
 * A step or init has just become `failed` (000 "Retry Protocol"): retry it if it has retries
 * left, otherwise it is a terminal failure (rollback, then member or batch failure).
 */
export async function handleFailedExecution(
  scope: HandlerScope,
  args: { ref: ExecutionRef; row: ExecutionRow; batch: BatchInfo },
): Promise<void> {
  const { row } = args;
  const { trx } = scope;
  if (row.status === "failed" && row.maxRetries > 0 && row.retryCount < row.maxRetries) {
    const retryAt = new Date(scope.now().getTime() + (row.retryIntervalSec ?? 0) * 1000);
    const pending = await transitionExecution(trx, args.ref, "retry", {
      reason: `retry ${row.retryCount + 1} of ${row.maxRetries}`,
      set: { retryCount: row.retryCount + 1, jobId: null, completedAt: null, retryAfter: retryAt },
    });
    if (pending !== undefined) {
      await sendSelfCheck(scope, {
        type: "retry-check",
        ref: args.ref,
        at: retryAt,
        attempt: pending.retryCount,
        redriveCount: pending.redriveCount,
      });
      return;
    }
  }
  await handleTerminalFailure(scope, args);
}

/**
 * No retry left (or a poll timeout, which never retries): dispatch the step's rollback sequence
 * if it has one, then isolate the member (steps) or fail the batch (init).
 */
export async function handleTerminalFailure(
  scope: HandlerScope,
  args: { ref: ExecutionRef; row: ExecutionRow; batch: BatchInfo },
): Promise<void> {
  const { ref, row, batch } = args;
  const { trx } = scope;
  if (ref.kind === "init") {
    await sendRollback(scope, {
      ...args,
      runbookVersion: row.runbookVersion ?? 0,
      variables: variablesFor(batch),
    });
    for (const init of await listInitsByBatch(trx, batch.id, row.runbookVersion ?? undefined)) {
      if (init.status === "pending") await transitionInit(trx, init.id, "cancel", { reason: "init failed" });
    }
    // Its outcome is `failed` (no phase ran), stamped by the same statement; the notification
    // commits with it (issue 12).
    const end = batchEnd("fail", await countBatchMemberEnds(trx, batch.id), []);
    const failed = await transitionBatch(trx, batch.id, "fail", {
      reason: `init step ${row.stepName} failed`,
      set: { outcome: end.outcome, succeededMembers: end.succeeded, failedMembers: end.failed },
    });
    if (failed !== undefined) {
      await notifyBatchEnded(trx, {
        batchId: batch.id,
        status: "failed",
        outcome: end.outcome,
        counts: { succeededMembers: end.succeeded, failedMembers: end.failed },
        at: scope.now(),
      });
    }
    return;
  }
  const member = row.batchMemberId === null ? undefined : await getMember(trx, row.batchMemberId);
  const phase = row.phaseExecutionId === null ? undefined : await getPhase(trx, row.phaseExecutionId);
  if (member === undefined || phase === undefined) return;
  // A for_each value's rollback sees its `{{item}}`, as the value's own call did (issue 30).
  await sendRollback(scope, {
    ...args,
    runbookVersion: phase.runbookVersion,
    variables: withItem(variablesFor(batch, member), row),
  });
  await failMember(scope, {
    memberId: member.id,
    reason: `step ${row.stepName} failed`,
    step: { name: row.stepName, errorCode: row.errorCode },
  });
}

/** 000 HandleMemberFailureAsync: member failed, every non-terminal step of it in every phase cancelled. */
export async function failMember(
  scope: HandlerScope,
  args: {
    memberId: number;
    reason: string;
    /** The step whose failure isolates the member, for the member.failed notification. */
    step?: { name: string; errorCode: string | null };
  },
): Promise<void> {
  const { trx } = scope;
  const failed = await transitionMember(trx, args.memberId, "fail", { reason: args.reason });
  await cancelOpenStepsOfMember(trx, args.memberId, "member failed");
  const member = await getMember(trx, args.memberId);
  if (member !== undefined) scope.followUps.batchIds.add(member.batchId);
  // Only the transition's winner notifies, in its transaction (issue 12).
  if (failed !== undefined && member !== undefined) {
    await notifyMemberFailed(trx, {
      batchId: member.batchId,
      memberId: member.id,
      stepName: args.step?.name ?? null,
      errorCode: args.step?.errorCode ?? null,
      at: scope.now(),
    });
  }
}

/**
 * 000 "Rollback Protocol": fire-and-forget, templated with the member's data; the step stays
 * failed. Each rollback step leaves an annotation event on the failed execution (sent, with its
 * job id, or not sent and why), which the steps API shows as the execution's `rollback`.
 */
async function sendRollback(
  scope: HandlerScope,
  args: {
    ref: ExecutionRef;
    row: ExecutionRow;
    batch: BatchInfo;
    runbookVersion: number;
    variables: Record<string, unknown>;
  },
): Promise<void> {
  const { ref, row, batch } = args;
  const { trx } = scope;
  if (row.onFailure === null) return;
  const runbook = await scope.runbooks.get(trx, batch.runbookName, args.runbookVersion);
  const sequence = runbook.rollbacks[row.onFailure] ?? [];
  const record = (index: number, stepName: string, outcome: RollbackStepRecord["outcome"]) =>
    recordRollbackStep(trx, {
      batchId: batch.id,
      entity: ref.kind,
      executionId: ref.id,
      executionStatus: row.status,
      sequence: row.onFailure ?? "",
      index,
      total: sequence.length,
      stepName,
      outcome,
    });
  for (const [index, step] of sequence.entries()) {
    const run = row.redriveCount > 0 ? `redrive-${row.redriveCount}-` : "";
    const jobId = `rollback-${ref.kind}-${ref.id}-${run}${row.retryCount}-${index}`;
    try {
      const resolved = resolveStep(step, args.variables);
      await sendUntrackedJob(trx, {
        jobId,
        batchId: batch.id,
        workerId: step.workerId,
        functionName: resolved.functionName,
        parameters: resolved.params,
        correlation: {
          StepExecutionId: ref.id,
          IsInitStep: ref.kind === "init",
          RunbookName: batch.runbookName,
          RunbookVersion: args.runbookVersion,
        },
      });
      // On the timeline and the steps API, so operators see what was sent for the failure.
      await record(index, step.name, { sent: true, jobId });
    } catch (error) {
      if (!(error instanceof TemplateResolutionError)) throw error;
      await record(index, step.name, { sent: false, reason: reasonCodes.templateUnresolved });
      scope.logger.error(
        { batchId: batch.id, stepExecutionId: ref.id, rollback: row.onFailure, missing: error.missing },
        "rollback step not sent: unresolved template variables",
      );
    }
  }
  scope.logger.warn(
    { batchId: batch.id, stepExecutionId: ref.id, rollback: row.onFailure, steps: sequence.length },
    "rollback dispatched",
  );
}

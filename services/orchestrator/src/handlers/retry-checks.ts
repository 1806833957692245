import { getMembersByIds, getPhasesByIds, getStepsByIds, type StepExecution } from "@matoolkit/db";
import type { RetryCheckMessage } from "@matoolkit/domain";
import { variablesFor, type BatchInfo } from "../batch-info.ts";
import type { HandlerScope } from "../context.ts";
import {
  dispatchStarts,
  failToDispatch,
  resolveCall,
  stepStart,
  type DispatchError,
  type StepStart,
} from "../dispatch.ts";
import { handleTerminalFailure } from "../failure.ts";
import { acceptsDispatch } from "../progression.ts";
import { handleRetryCheck } from "./checks.ts";

/**
 * 000 "Retry Protocol" step 3 for a batch of retry checks, set-based: what handleRetryCheck
 * decides for one step — dispatch it only if it is still `pending`, its batch accepts dispatch
 * and its member is still active — decided for all of them from one read each of their steps,
 * members and phases, then ONE guarded dispatch transition and ONE publish of their jobs
 * (issue 29: a retry member paid about six statements for its check alone). `batches` are the
 * checks' batches, share-locked by the caller before any execution row (the pause order).
 * Init retries, rarer and with their own progression, go one by one through handleRetryCheck.
 * A step whose parameters cannot resolve fails as it would alone (`fail_to_dispatch`, then its
 * terminal failure); a step another delivery dispatched or cancelled first gets no job.
 */
export async function handleRetryChecks(
  scope: HandlerScope,
  checks: readonly RetryCheckMessage[],
  batches: ReadonlyMap<number, BatchInfo>,
): Promise<void> {
  for (const check of checks) if (check.IsInitStep) await handleRetryCheck(scope, check);
  const stepIds = checks.filter((check) => !check.IsInitStep).map((check) => check.StepExecutionId);
  const steps = (await getStepsByIds(scope.trx, stepIds)).filter((step) => step.status === "pending");
  if (steps.length === 0) return;
  const members = byId(
    await getMembersByIds(
      scope.trx,
      steps.map((step) => step.batchMemberId),
    ),
  );
  const phases = byId(
    await getPhasesByIds(
      scope.trx,
      steps.map((step) => step.phaseExecutionId),
    ),
  );
  const starts: StepStart[] = [];
  const unresolvable: { step: StepExecution; batch: BatchInfo; error: DispatchError }[] = [];
  for (const step of steps) {
    const batch = batches.get(step.batchId);
    const member = members.get(step.batchMemberId);
    const phase = phases.get(step.phaseExecutionId);
    if (batch === undefined || !acceptsDispatch(batch) || member?.status !== "active") continue;
    if (phase === undefined) throw new Error("execution has neither a runbook version nor a phase");
    const call = resolveCall(step, () => variablesFor(batch, member));
    if (call.ok) starts.push(stepStart(scope, step, call, { batch, runbookVersion: phase.runbookVersion }));
    else unresolvable.push({ step, batch, error: call.error });
  }
  await dispatchStarts(scope, starts);
  for (const { step, batch, error } of unresolvable) {
    const ref = { kind: "step", id: step.id } as const;
    const failed = await failToDispatch(scope, ref, error);
    if (failed !== undefined) await handleTerminalFailure(scope, { ref, row: failed, batch });
  }
}

function byId<T extends { id: number }>(rows: readonly T[]): Map<number, T> {
  return new Map(rows.map((row) => [row.id, row]));
}

import type { ExecutionRow } from "./executions.ts";
import {
  FOR_EACH_ITEM_VARIABLE,
  resolveParams,
  resolveTemplateString,
  TemplateResolutionError,
  type ConditionEvaluationError,
  type ForEachError,
} from "@matoolkit/domain";
import { dispatchSteps, type ChainStep, type StepDispatch, type StepExecution } from "@matoolkit/db";
import type { BatchInfo } from "./batch-info.ts";
import type { HandlerScope } from "./context.ts";
import { countByPhase } from "./follow-up-phases.ts";
import { jobIdFor, transitionExecution, type ExecutionRef } from "./executions.ts";
import { sendWorkerJob, sendWorkerJobs, type TrackedJob } from "./outgoing.ts";

export type DispatchOutcome =
  | { readonly kind: "dispatched"; readonly row: ExecutionRow }
  /** Another delivery dispatched (or cancelled) it first: nothing to do. */
  | { readonly kind: "lost" }
  /** Templates could not be resolved: the execution is now `failed` with template.unresolved. */
  | { readonly kind: "failed"; readonly row: ExecutionRow };

export type ResolvedCall =
  | { readonly ok: true; readonly functionName: string; readonly params: Record<string, unknown> }
  | { readonly ok: false; readonly error: TemplateResolutionError };

/**
 * The function and parameters to send. Params that waited for a worker output of an earlier step
 * (`params_resolved = false`) are resolved now, against the member's latest data; a for_each
 * step's value (issue 30) is `{{item}}` there, over any column of that name.
 */
export function resolveCall(
  row: Pick<ExecutionRow, "functionName" | "paramsJson" | "paramsResolved" | "itemValue">,
  variables: () => Record<string, unknown>,
): ResolvedCall {
  const params = (row.paramsJson ?? {}) as Record<string, unknown>;
  if (row.paramsResolved) return { ok: true, functionName: row.functionName, params };
  try {
    const known = withItem(variables(), row);
    return {
      ok: true,
      functionName: resolveTemplateString(row.functionName, known),
      params: resolveParams(params, known),
    };
  } catch (error) {
    if (!(error instanceof TemplateResolutionError)) throw error;
    return { ok: false, error };
  }
}

/** The member's variables, with a for_each row's value as `{{item}}` (unchanged for other rows). */
export function withItem(
  variables: Record<string, unknown>,
  row: Pick<ExecutionRow, "itemValue">,
): Record<string, unknown> {
  if (row.itemValue === null || row.itemValue === undefined) return variables;
  return { ...variables, [FOR_EACH_ITEM_VARIABLE]: row.itemValue };
}

/** Why a step cannot be sent to a worker for this member. */
export type DispatchError = TemplateResolutionError | ConditionEvaluationError | ForEachError;

/**
 * pending → failed, through its own event (see ARCHITECTURE.md): template.unresolved,
 * condition.invalid when its `when:` could not be decided for the member, or for_each.too_many /
 * for_each.not_a_list when its for_each: list could not be expanded.
 */
export function failToDispatch(
  scope: HandlerScope,
  ref: ExecutionRef,
  error: DispatchError,
): Promise<ExecutionRow | undefined> {
  return transitionExecution(scope.trx, ref, "fail_to_dispatch", {
    reason: error.reason,
    set: { errorCode: error.reason, errorMessage: error.message, completedAt: scope.now() },
  });
}

/** pending → dispatched and the worker job, in the scope's transaction, for one execution. */
export async function dispatchExecution(
  scope: HandlerScope,
  args: {
    ref: ExecutionRef;
    row: ExecutionRow;
    batch: BatchInfo;
    runbookVersion: number;
    variables: Record<string, unknown>;
  },
): Promise<DispatchOutcome> {
  const { ref, row, batch } = args;
  const call = resolveCall(row, () => args.variables);
  if (!call.ok) {
    const failed = await failToDispatch(scope, ref, call.error);
    return failed === undefined ? { kind: "lost" } : { kind: "failed", row: failed };
  }
  const jobId = jobIdFor(ref, { ...row, pollCount: 0 });
  const dispatched = await transitionExecution(scope.trx, ref, "dispatch", {
    set: {
      jobId,
      dispatchedAt: scope.now(),
      functionName: call.functionName,
      paramsJson: call.params,
      paramsResolved: true,
    },
  });
  if (dispatched === undefined) return { kind: "lost" };
  await sendWorkerJob(scope, {
    ref,
    row: dispatched,
    jobId,
    batchId: batch.id,
    runbook: { runbookName: batch.runbookName, runbookVersion: args.runbookVersion },
  });
  return { kind: "dispatched", row: dispatched };
}

/** A pending phase step's dispatch and its job, its call resolved (set-based dispatch). */
export interface StepStart {
  readonly dispatch: StepDispatch;
  readonly job: Omit<TrackedJob, "row">;
}

export function stepStart(
  scope: Pick<HandlerScope, "now">,
  step: ChainStep,
  call: { readonly functionName: string; readonly params: Record<string, unknown> },
  owner: { readonly batch: BatchInfo; readonly runbookVersion: number },
): StepStart {
  const ref = { kind: "step", id: step.id } as const;
  const jobId = jobIdFor(ref, { ...step, pollCount: 0 });
  return {
    dispatch: {
      id: step.id,
      jobId,
      functionName: call.functionName,
      paramsJson: call.params,
      dispatchedAt: scope.now(),
    },
    job: {
      ref,
      jobId,
      batchId: owner.batch.id,
      runbook: { runbookName: owner.batch.runbookName, runbookVersion: owner.runbookVersion },
    },
  };
}

/**
 * ONE guarded pending → dispatched transition for all the starts (advanceMembers, the retry
 * checks), then ONE publish of the jobs of the steps that moved: a step another delivery
 * dispatched or cancelled first gets no job. Returns the steps that moved (counted by phase in
 * the follow-ups: follow-up-phases.ts).
 */
export async function dispatchStarts(
  scope: HandlerScope,
  starts: readonly StepStart[],
): Promise<StepExecution[]> {
  const moved = await dispatchSteps(
    scope.trx,
    starts.map((start) => start.dispatch),
  );
  const dispatched = new Map(moved.map((row) => [row.id, row]));
  for (const row of moved) countByPhase(scope.followUps.dispatchedByPhase, row.phaseExecutionId);
  await sendWorkerJobs(
    scope,
    starts.flatMap(({ job, dispatch }) => {
      const row = dispatched.get(dispatch.id);
      return row === undefined ? [] : [{ ...job, row }];
    }),
  );
  return moved;
}

/**
 * The executions to start now in one member's chain of phase steps: the pending rows of its first
 * step that is not done, whose retry_after has come. A for_each step (issue 30) is one link of
 * several rows (one per value, sharing the step index): its pending rows start together, beside
 * those of its values in flight, and the chain moves on once all of them are done. A failed,
 * timed-out or cancelled row blocks the link (the member is failing). For any other step this is
 * nextToStart: the one pending row, or nothing while it runs.
 */
export function nextGroupToStart<T extends { status: string; stepIndex: number; retryAfter: Date | null }>(
  chain: readonly T[],
  now: Date,
): T[] {
  const first = chain.reduce<T | undefined>(
    (found, row) => (isDone(row) || (found !== undefined && found.stepIndex <= row.stepIndex) ? found : row),
    undefined,
  );
  if (first === undefined) return [];
  const link = chain.filter((row) => row.stepIndex === first.stepIndex);
  if (link.some((row) => !isDone(row) && !OPEN.has(row.status))) return [];
  return link.filter(
    (row) =>
      row.status === "pending" && (row.retryAfter === null || row.retryAfter.getTime() <= now.getTime()),
  );
}

const OPEN = new Set(["pending", "dispatched", "polling"]);

/**
 * The next execution to run in an ordered chain (one member's steps in a phase, or a batch's init
 * steps): the first that is not done (succeeded, or skipped by its `when:`), if it is still
 * pending. Anything in flight or failed blocks the chain, which is what keeps steps sequential
 * per member.
 */
export function nextDispatchable<T extends { status: string; stepIndex: number }>(
  rows: readonly T[],
): T | undefined {
  const ordered = [...rows].sort((a, b) => a.stepIndex - b.stepIndex);
  for (const row of ordered) {
    if (isDone(row)) continue;
    return row.status === "pending" ? row : undefined;
  }
  return undefined;
}

/** A step the member's chain has passed: it succeeded, or its `when:` skipped it (issue 30). */
export function isDone(row: { readonly status: string }): boolean {
  return row.status === "succeeded" || row.status === "skipped";
}

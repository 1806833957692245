import type { ExecutionRow } from "./executions.ts";
import {
  resolveParams,
  resolveTemplateString,
  TemplateResolutionError,
  type ConditionEvaluationError,
} from "@matoolkit/domain";
import type { BatchInfo } from "./batch-info.ts";
import type { HandlerScope } from "./context.ts";
import { jobIdFor, transitionExecution, type ExecutionRef } from "./executions.ts";
import { sendWorkerJob } from "./outgoing.ts";

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
 * (`params_resolved = false`) are resolved now, against the member's latest data.
 */
export function resolveCall(
  row: Pick<ExecutionRow, "functionName" | "paramsJson" | "paramsResolved">,
  variables: () => Record<string, unknown>,
): ResolvedCall {
  const params = (row.paramsJson ?? {}) as Record<string, unknown>;
  if (row.paramsResolved) return { ok: true, functionName: row.functionName, params };
  try {
    const known = variables();
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

/**
 * pending → failed, through its own event (see ARCHITECTURE.md): template.unresolved, or
 * condition.invalid when its `when:` could not be decided for the member.
 */
export function failToDispatch(
  scope: HandlerScope,
  ref: ExecutionRef,
  error: TemplateResolutionError | ConditionEvaluationError,
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
  await sendWorkerJob(scope.trx, {
    ref,
    row: dispatched,
    jobId,
    batchId: batch.id,
    runbook: { runbookName: batch.runbookName, runbookVersion: args.runbookVersion },
  });
  return { kind: "dispatched", row: dispatched };
}

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

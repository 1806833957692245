import type { ExecutionRow } from "./executions.ts";
import type { Db } from "@matoolkit/db";
import { resolveParams, resolveTemplateString, TemplateResolutionError } from "@matoolkit/domain";
import type { BatchInfo } from "./batch-info.ts";
import type { OrchestratorContext } from "./context.ts";
import { jobIdFor, transitionExecution, type ExecutionRef } from "./executions.ts";
import { sendWorkerJob } from "./outgoing.ts";

export type DispatchOutcome =
  | { readonly kind: "dispatched"; readonly row: ExecutionRow }
  /** Another delivery dispatched (or cancelled) it first: nothing to do. */
  | { readonly kind: "lost" }
  /** Templates could not be resolved: the execution is now `failed` with template.unresolved. */
  | { readonly kind: "failed"; readonly row: ExecutionRow };

/**
 * pending → dispatched and the worker job, in the caller's transaction. Params that waited for a
 * worker output of an earlier step are resolved now, against the member's latest data.
 */
export async function dispatchExecution(
  trx: Db,
  ctx: OrchestratorContext,
  args: {
    ref: ExecutionRef;
    row: ExecutionRow;
    batch: BatchInfo;
    runbookVersion: number;
    variables: Record<string, unknown>;
  },
): Promise<DispatchOutcome> {
  const { ref, row, batch } = args;
  let functionName = row.functionName;
  let params = (row.paramsJson ?? {}) as Record<string, unknown>;
  if (!row.paramsResolved) {
    try {
      functionName = resolveTemplateString(functionName, args.variables);
      params = resolveParams(params, args.variables);
    } catch (error) {
      if (!(error instanceof TemplateResolutionError)) throw error;
      const failed = await transitionExecution(trx, ref, "fail_to_dispatch", {
        reason: "template.unresolved",
        set: { errorCode: "template.unresolved", errorMessage: error.message, completedAt: ctx.now() },
      });
      return failed === undefined ? { kind: "lost" } : { kind: "failed", row: failed };
    }
  }
  const jobId = jobIdFor(ref, row.retryCount, 0);
  const dispatched = await transitionExecution(trx, ref, "dispatch", {
    set: { jobId, dispatchedAt: ctx.now(), functionName, paramsJson: params, paramsResolved: true },
  });
  if (dispatched === undefined) return { kind: "lost" };
  await sendWorkerJob(trx, {
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
 * steps): the first that has not succeeded, if it is still pending. Anything in flight or failed
 * blocks the chain, which is what keeps steps sequential per member.
 */
export function nextDispatchable<T extends { status: string; stepIndex: number }>(
  rows: readonly T[],
): T | undefined {
  const ordered = [...rows].sort((a, b) => a.stepIndex - b.stepIndex);
  for (const row of ordered) {
    if (row.status === "succeeded") continue;
    return row.status === "pending" ? row : undefined;
  }
  return undefined;
}

import type { WorkflowContext, WorkflowDefinition, WorkflowTask } from "@matoolkit/runtime";
import type { BatchProgress } from "./progress-batch.ts";

export const BATCH_WORKFLOW = "batch-progression";
export const PROGRESS_ACTIVITY = "batch-progress";
export const BATCH_CHANGED_EVENT = "batch-changed";

export interface BatchWorkflowInput {
  readonly batchId: number;
  /** How long the workflow sleeps at most before re-reading SQL (a lost nudge strands nothing). */
  readonly recheckSeconds: number;
}

/** Iterations before continue-as-new, so an instance that lives for weeks keeps a short history. */
const ITERATIONS_PER_GENERATION = 50;

/**
 * One durable workflow per batch (init → active → each phase when due → terminal), written in the
 * durable-task style both the embedded engine and Dapr Workflow run. It holds no state of its own:
 * every iteration asks SQL (the progress activity) what is due, then sleeps until the next phase
 * falls due, a nudge arrives (advance, cancel, new phases, a phase or the batch ended) or the
 * re-check interval passes. Restarted from nothing, it simply carries on from SQL.
 */
export async function* batchWorkflow(
  ctx: WorkflowContext,
  input: BatchWorkflowInput,
): AsyncGenerator<WorkflowTask, string, unknown> {
  for (let iteration = 0; iteration < ITERATIONS_PER_GENERATION; iteration++) {
    let progress: BatchProgress | undefined;
    try {
      progress = (yield ctx.callActivity(PROGRESS_ACTIVITY, { batchId: input.batchId })) as BatchProgress;
    } catch {
      // The database was unreachable or a bug threw: try again at the next wake-up, never give up.
      progress = undefined;
    }
    if (progress?.finished === true) return progress.status;
    const recheckAt = ctx.now.getTime() + input.recheckSeconds * 1000;
    const dueAt =
      progress?.nextDueAt === null || progress === undefined ? Infinity : Date.parse(progress.nextDueAt);
    const timer = ctx.createTimer(new Date(Math.min(recheckAt, dueAt)));
    const nudge = ctx.waitForExternalEvent(BATCH_CHANGED_EVENT);
    yield ctx.whenAny([timer, nudge]);
  }
  ctx.continueAsNew(input);
  return "continued";
}

export function batchWorkflowDefinition(
  progress: (batchId: number) => Promise<BatchProgress>,
): WorkflowDefinition<never, unknown> {
  return {
    name: BATCH_WORKFLOW,
    workflow: batchWorkflow as never,
    activities: {
      [PROGRESS_ACTIVITY]: ((input: { batchId: number }) => progress(input.batchId)) as never,
    },
  };
}

export function batchInstanceId(batchId: number): string {
  return `batch-${batchId}`;
}

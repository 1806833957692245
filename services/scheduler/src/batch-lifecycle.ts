import { notifyBatchChanged } from "@matoolkit/commands";
import type { Db } from "@matoolkit/db";

/**
 * What the scheduler tells the batch workflow (wired by the orchestrator's composition): a batch
 * it created, and a batch whose phase executions a version transition replaced. Called after the
 * change has committed; the default does nothing (the scheduler's own phase timing and the
 * outbox messages drive batches without a workflow).
 */
export interface BatchLifecycle {
  batchCreated(batchId: number): Promise<void>;
  phasesChanged(batchId: number): Promise<void>;
}

export const noBatchLifecycle: BatchLifecycle = {
  batchCreated: async () => {},
  phasesChanged: async () => {},
};

/**
 * The production lifecycle: a `batch-changed` message through the outbox, which the orchestrator
 * (maybe another process) turns into "start this batch's workflow if it is not running, and
 * look at SQL now". Even if it were lost, the workflow host's resume-from-SQL pass finds the batch.
 */
export function nudgeBatchWorkflows(db: Db): BatchLifecycle {
  return {
    batchCreated: (batchId) => notifyBatchChanged(db, batchId, "created"),
    phasesChanged: (batchId) => notifyBatchChanged(db, batchId, "phases-changed"),
  };
}

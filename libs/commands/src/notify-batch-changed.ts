import { enqueueOutbox, type Db } from "@matoolkit/db";
import { batchChangedEnvelope } from "@matoolkit/domain";

/**
 * Tells the batch's workflow (in the orchestrator, maybe another process) to look at the batch
 * again now instead of at its next timer: after an advance, a cancel, new phases or a new batch.
 * Only a nudge: the workflow re-reads SQL on its own schedule anyway.
 */
export async function notifyBatchChanged(trx: Db, batchId: number, reason: string): Promise<void> {
  await enqueueOutbox(trx, [batchChangedEnvelope({ BatchId: batchId }, reason)]);
}

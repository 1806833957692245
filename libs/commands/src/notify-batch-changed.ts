import { enqueueOutbox, type Db } from "@matoolkit/db";
import { routingProperties, topics, type BatchChangedMessage } from "@matoolkit/domain";

/**
 * Tells the batch's workflow (in the orchestrator, maybe another process) to look at the batch
 * again now instead of at its next timer: after an advance, a cancel, new phases or a new batch.
 * Only a nudge: the workflow re-reads SQL on its own schedule anyway.
 */
export async function notifyBatchChanged(trx: Db, batchId: number, reason: string): Promise<void> {
  const body: BatchChangedMessage = { BatchId: batchId };
  await enqueueOutbox(trx, [
    {
      // Unique per nudge: two nudges in one dedupe window must both arrive.
      messageId: `batch-changed:${batchId}:${reason}:${Date.now()}:${Math.random().toString(36).slice(2, 8)}`,
      topic: topics.orchestratorEvents,
      properties: { [routingProperties.messageType]: "batch-changed" },
      body,
    },
  ]);
}

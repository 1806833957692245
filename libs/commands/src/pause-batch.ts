import { transitionBatch, type Batch, type Db } from "@matoolkit/db";
import { notifyBatchChanged } from "./notify-batch-changed.ts";

/**
 * active → paused (issue 12), in the caller's transaction, and the batch-changed nudge (outbox)
 * that has the orchestrator suspend the batch's workflow. Undefined when the batch is not active
 * (the guarded transition lost): nothing is written then.
 *
 * The transition locks the batch row FOR NO KEY UPDATE. Every orchestrator transaction that may
 * send a worker job holds the row FOR SHARE from before it locks an execution until it commits,
 * so once this commits no transaction sends a job for the batch: one that started earlier has
 * committed first (its jobs were already out), and any later one reads `paused`. Running jobs
 * are not recalled; their results are still recorded.
 */
export async function pauseBatch(
  trx: Db,
  batchId: number,
  options: { readonly actor?: string; readonly reason?: string } = {},
): Promise<Batch | undefined> {
  const paused = await transitionBatch(trx, batchId, "pause", {
    reason: options.reason ?? "paused by operator",
    actor: options.actor,
  });
  if (paused === undefined) return undefined;
  await notifyBatchChanged(trx, batchId, "paused");
  return paused;
}

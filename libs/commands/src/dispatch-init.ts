import { enqueueOutbox, transitionBatch, type Db } from "@matoolkit/db";
import { batchInitMessage } from "./messages.ts";

/**
 * detected → init_dispatched and the `batch-init` message, in the caller's transaction (outbox).
 * Guarded: the admin API, the batch workflow and the scheduler may all try; one wins.
 */
export async function dispatchInit(
  trx: Db,
  args: {
    batchId: number;
    runbookName: string;
    runbookVersion: number;
    reason: string;
    at?: Date;
    /** The operator advancing a manual batch (events.actor); omitted for the system's own dispatch. */
    actor?: string;
  },
): Promise<boolean> {
  const won = await transitionBatch(trx, args.batchId, "dispatch_init", {
    reason: args.reason,
    actor: args.actor,
    set: { initDispatchedAt: args.at ?? new Date() },
  });
  if (won === undefined) return false;
  await enqueueOutbox(trx, [
    batchInitMessage({
      BatchId: args.batchId,
      RunbookName: args.runbookName,
      RunbookVersion: args.runbookVersion,
    }),
  ]);
  return true;
}

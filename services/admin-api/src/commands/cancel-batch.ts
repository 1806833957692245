import { notifyBatchChanged } from "@matoolkit/commands";
import { cancelBatch, getBatch, type Db } from "@matoolkit/db";
import { reasonCodes } from "@matoolkit/domain";
import { conflict, notFound } from "../http/api-error.ts";

export interface CancelBatchResult {
  readonly batchId: number;
  readonly status: "cancelled";
  /** How many of each this cancel ended. */
  readonly cancelled: { readonly phases: number; readonly steps: number; readonly inits: number };
}

/** PostgreSQL's deadlock_detected: the other transaction went ahead; ours can simply run again. */
const DEADLOCK_DETECTED = "40P01";
const ATTEMPTS = 3;

/**
 * POST /api/batches/{id}/cancel (000 lists it; the `cancelled` status is ours): the batch, its
 * open phases, steps and init steps cancelled in one transaction (cancelBatch), and the batch's
 * workflow nudged. Results that arrive later for the cancelled steps are ignored (terminal guard).
 * A batch that has already ended, or was cancelled already, answers 409.
 */
export async function cancelBatchCommand(db: Db, batchId: number, actor: string): Promise<CancelBatchResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().execute(async (trx) => {
        if ((await getBatch(trx, batchId)) === undefined) throw notFound(`batch ${batchId} does not exist`);
        const cancelled = await cancelBatch(trx, batchId, reasonCodes.batchCancelled, { actor });
        if (cancelled === undefined) {
          // Read after the guarded transition waited for any concurrent change: the status that won.
          const current = await getBatch(trx, batchId);
          throw conflict(
            `batch ${batchId} is ${current?.status ?? "gone"}; only a running batch can be cancelled`,
          );
        }
        await notifyBatchChanged(trx, batchId, "cancelled");
        return {
          batchId,
          status: "cancelled",
          cancelled: {
            phases: cancelled.phaseIds.length,
            steps: cancelled.stepIds.length,
            inits: cancelled.initIds.length,
          },
        };
      });
    } catch (error) {
      // A handler finishing an init step locks it, then the batch; the cancel takes them the other
      // way round. PostgreSQL aborts one of the two; if it was us, the next attempt sees its result.
      if (attempt < ATTEMPTS && (error as { code?: unknown }).code === DEADLOCK_DETECTED) continue;
      throw error;
    }
  }
}

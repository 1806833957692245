import { pauseBatch } from "@matoolkit/commands";
import { getBatch, type Db } from "@matoolkit/db";
import { conflict, notFound } from "../http/api-error.ts";

export interface PauseBatchResult {
  readonly batchId: number;
  readonly status: "paused";
}

/**
 * POST /api/batches/{id}/pause (issue 12): active → paused in one transaction with the nudge that
 * suspends the batch's workflow (pauseBatch). From then on the orchestrator sends no new job, phase
 * dispatch, poll or retry for the batch; jobs already out finish and their results are recorded.
 * A batch that is not active answers 409 naming its status, with nothing written.
 */
export async function pauseBatchCommand(db: Db, batchId: number, actor: string): Promise<PauseBatchResult> {
  return db.transaction().execute(async (trx) => {
    if ((await getBatch(trx, batchId)) === undefined) throw notFound(`batch ${batchId} does not exist`);
    const paused = await pauseBatch(trx, batchId, { actor });
    if (paused === undefined) {
      // Read after the guarded transition waited for any concurrent change: the status that won.
      const current = await getBatch(trx, batchId);
      throw conflict(`batch ${batchId} is ${current?.status ?? "gone"}; only an active batch can be paused`);
    }
    return { batchId, status: "paused" };
  });
}

import { resumeBatch } from "@matoolkit/commands";
import { getBatch, type Db } from "@matoolkit/db";
import { conflict, notFound } from "../http/api-error.ts";

export interface ResumeBatchResult {
  readonly batchId: number;
  readonly status: "active";
  /** What the pause had held back and the resume sent again. */
  readonly resent: { readonly phases: number; readonly pollChecks: number; readonly retryChecks: number };
}

/**
 * POST /api/batches/{id}/resume (issue 12): paused → active in one transaction with the messages
 * the pause held back (resumeBatch: phase restarts, poll-checks, retry-checks, each at its due
 * time) and the nudge that resumes the batch's workflow. A batch that is not paused answers 409
 * naming its status, with nothing written.
 */
export async function resumeBatchCommand(db: Db, batchId: number, actor: string): Promise<ResumeBatchResult> {
  return db.transaction().execute(async (trx) => {
    if ((await getBatch(trx, batchId)) === undefined) throw notFound(`batch ${batchId} does not exist`);
    const resumed = await resumeBatch(trx, batchId, { actor });
    if (resumed === undefined) {
      const current = await getBatch(trx, batchId);
      throw conflict(`batch ${batchId} is ${current?.status ?? "gone"}; only a paused batch can be resumed`);
    }
    return { batchId, status: "active", resent: resumed.sent };
  });
}

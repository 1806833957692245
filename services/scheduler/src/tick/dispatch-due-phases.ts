import { dispatchPhase } from "@matoolkit/commands";
import { listDuePhases, type Db } from "@matoolkit/db";

/**
 * 000 "Automated Batch Lifecycle" step 9: pending phases of the runbook's active automated
 * batches whose due_at has passed move to `dispatched` and get their phase-due, together. The
 * transition is guarded: a phase another writer (the batch workflow) dispatched first is left
 * alone, and its phase-due shares this message id anyway.
 */
export async function dispatchDuePhases(db: Db, runbookName: string, now: Date): Promise<number[]> {
  return db.transaction().execute(async (trx) => {
    const dispatched: number[] = [];
    for (const phase of await listDuePhases(trx, runbookName, now)) {
      const won = await dispatchPhase(trx, {
        batchId: phase.batchId,
        runbookName: phase.runbookName,
        phase,
        reason: "due (scheduler)",
      });
      if (won) dispatched.push(phase.id);
    }
    return dispatched;
  });
}

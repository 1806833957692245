import { dispatchPhase } from "@matoolkit/commands";
import { listDuePhases, lockBatch, type Db } from "@matoolkit/db";

/**
 * 000 "Automated Batch Lifecycle" step 9: pending phases of the runbook's active automated
 * batches whose due_at has passed move to `dispatched` and get their phase-due, together. The
 * transition is guarded: a phase another writer (the batch workflow) dispatched first is left
 * alone, and its phase-due shares this message id anyway. A paused batch's phases wait (issue 12).
 * A gated phase (issue 30) moves to `awaiting_approval` instead, and the phases after it stay
 * pending until it is decided. Returns the ids of the phases dispatched.
 */
export async function dispatchDuePhases(db: Db, runbookName: string, now: Date): Promise<number[]> {
  return db.transaction().execute(async (trx) => {
    const dispatched: number[] = [];
    for (const phase of await listDuePhases(trx, runbookName, now)) {
      // Share-locked and read again (batch order, as listed): a batch paused since the list was
      // read keeps its phases pending; its resume nudges the batch workflow, which dispatches them.
      if ((await lockBatch(trx, phase.batchId, "share"))?.status !== "active") continue;
      const outcome = await dispatchPhase(trx, {
        batchId: phase.batchId,
        runbookName: phase.runbookName,
        phase,
        reason: "due (scheduler)",
      });
      if (outcome === "dispatched") dispatched.push(phase.id);
    }
    return dispatched;
  });
}

import { batchMachine, type BatchStatus } from "@matoolkit/domain";
import type { Batch } from "./batches.table.ts";
import type { Db } from "./connection.ts";

/**
 * Batches the scheduler created from a runbook's data source (is_manual = false). A batch
 * references the runbook version it runs, so "the batches of runbook X" spans every version of X.
 */
export type AutomatedBatch = Batch & { runbookName: string; runbookVersion: number };

/** Derived from the machine, so a state added later (e.g. cancelled) is classified by its table. */
export const inFlightBatchStates: readonly BatchStatus[] = batchMachine.states.filter(
  (state) => !batchMachine.isTerminal(state),
);

/** Automated batches of every version of `runbookName` that have not finished, oldest first. */
export async function listInFlightAutomatedBatches(db: Db, runbookName: string): Promise<AutomatedBatch[]> {
  return db
    .selectFrom("batches")
    .innerJoin("runbooks", "runbooks.id", "batches.runbookId")
    .selectAll("batches")
    .select(["runbooks.name as runbookName", "runbooks.version as runbookVersion"])
    .where("runbooks.name", "=", runbookName)
    .where("batches.isManual", "=", false)
    .where("batches.status", "in", inFlightBatchStates)
    .orderBy("batches.id")
    .execute();
}

/** Every automated batch of every version of `runbookName`: which start times already have one. */
export async function listAutomatedBatchStarts(
  db: Db,
  runbookName: string,
): Promise<Pick<Batch, "id" | "status" | "batchStartTime">[]> {
  return db
    .selectFrom("batches")
    .innerJoin("runbooks", "runbooks.id", "batches.runbookId")
    .select(["batches.id", "batches.status", "batches.batchStartTime"])
    .where("runbooks.name", "=", runbookName)
    .where("batches.isManual", "=", false)
    .orderBy("batches.id")
    .execute();
}

/** Reads a batch and locks its row until the transaction ends (a version transition holds it). */
export async function getBatchForUpdate(db: Db, id: number): Promise<Batch | undefined> {
  return db.selectFrom("batches").selectAll().where("id", "=", id).forNoKeyUpdate().executeTakeFirst();
}

/**
 * A version transition moves the batch to the new runbook version: the orchestrator then resolves
 * on_member_removed and the API reports the version the batch now runs. Not a status change.
 */
export async function moveBatchToRunbookVersion(db: Db, batchId: number, runbookId: number): Promise<void> {
  await db.updateTable("batches").set({ runbookId }).where("id", "=", batchId).execute();
}

import { insertBatch, insertPhases, transitionBatch, type Db, type Runbook } from "@matoolkit/db";
import type { RunbookDefinition } from "@matoolkit/domain";
import { dispatchInit, phaseRowsFor } from "@matoolkit/commands";

/**
 * 000 "Automated Batch Lifecycle" steps 3 and 5, in the caller's transaction: the batch and its
 * phase executions; then batch-init through the outbox when the runbook has init steps
 * (init_dispatched), else straight to `active`. Its members (the staged rows of its start time)
 * are the caller's to insert before the transaction commits: as their rows stream in, or every
 * new batch's in one statement (`insertMembersOfNewBatches`).
 */
export async function createAutomatedBatch(
  trx: Db,
  runbook: { readonly row: Runbook; readonly definition: RunbookDefinition },
  batchStart: Date,
  now: Date,
): Promise<number> {
  const batch = await insertBatch(trx, {
    runbookId: runbook.row.id,
    batchStartTime: batchStart,
    isManual: false,
    createdBy: null,
  });
  await insertPhases(trx, batch.id, phaseRowsFor(runbook.definition, runbook.row.version, batchStart));
  if (runbook.definition.init.length === 0) {
    await transitionBatch(trx, batch.id, "activate", { reason: "runbook has no init steps" });
    return batch.id;
  }
  await dispatchInit(trx, {
    batchId: batch.id,
    runbookName: runbook.row.name,
    runbookVersion: runbook.row.version,
    reason: "detected by the scheduler",
    at: now,
  });
  return batch.id;
}

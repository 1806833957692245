import {
  enqueueOutbox,
  getBatchForUpdate,
  insertPhases,
  markIgnoreOverdueApplied,
  moveBatchToRunbookVersion,
  skipPhasesDueBy,
  supersedePendingPhases,
  type AutomatedBatch,
  type Db,
  type Runbook,
} from "@matoolkit/db";
import { batchMachine, type RunbookDefinition } from "@matoolkit/domain";
import type { BatchLifecycle } from "../batch-lifecycle.ts";
import { batchInitMessage, phaseRowsFor } from "@matoolkit/commands";

/**
 * 000 "Version Transition Protocol", for the in-flight automated batches still on an older
 * version of the runbook, one transaction per batch:
 * 1. the old version's pending phases become `superseded` and the new version's phase
 *    executions are created (due_at from the batch's start time);
 * 2. overdue_behavior `rerun`: nothing more, the new phases already past due fall due at once
 *    and are dispatched by this tick; `ignore`: they are marked `skipped` (only while
 *    ignore_overdue_applied is unset; it is set once every batch has moved);
 * 3. rerun_init with init steps: batch-init for the new version (init executions are per version);
 * 4. the batch now references the new version, which is what marks it transitioned.
 * Manual batches are left alone: their phases have no due time, an admin advances them.
 * Returns the ids of the batches moved; the batch workflow is told after each commit.
 */
export async function transitionVersions(
  db: Db,
  lifecycle: BatchLifecycle,
  runbook: { readonly row: Runbook; readonly definition: RunbookDefinition },
  inFlight: readonly AutomatedBatch[],
  now: Date,
): Promise<number[]> {
  const stale = inFlight.filter((batch) => batch.runbookVersion < runbook.row.version);
  if (stale.length === 0) return [];
  const skipOverdue = runbook.row.overdueBehavior === "ignore" && !runbook.row.ignoreOverdueApplied;
  const moved: number[] = [];
  for (const batch of stale) {
    const changed = await db
      .transaction()
      .execute((trx) => transitionBatch(trx, runbook, batch.id, { skipOverdue, now }));
    if (!changed) continue;
    moved.push(batch.id);
    await lifecycle.phasesChanged(batch.id);
  }
  if (runbook.row.overdueBehavior === "ignore") await markIgnoreOverdueApplied(db, runbook.row.id);
  return moved;
}

async function transitionBatch(
  trx: Db,
  runbook: { readonly row: Runbook; readonly definition: RunbookDefinition },
  batchId: number,
  options: { readonly skipOverdue: boolean; readonly now: Date },
): Promise<boolean> {
  const { row, definition } = runbook;
  // Locked: the orchestrator's batch completion waits, then sees the new pending phases.
  const batch = await getBatchForUpdate(trx, batchId);
  if (batch === undefined || batch.isManual || batchMachine.isTerminal(batch.status)) return false;
  if (batch.runbookId === row.id) return false;
  await supersedePendingPhases(trx, batch.id, row.version);
  await insertPhases(trx, batch.id, phaseRowsFor(definition, row.version, batch.batchStartTime));
  if (options.skipOverdue) await skipPhasesDueBy(trx, batch.id, row.version, options.now);
  if (row.rerunInit && definition.init.length > 0) {
    await enqueueOutbox(trx, [
      batchInitMessage({ BatchId: batch.id, RunbookName: row.name, RunbookVersion: row.version }),
    ]);
  }
  await moveBatchToRunbookVersion(trx, batch.id, row.id);
  return true;
}

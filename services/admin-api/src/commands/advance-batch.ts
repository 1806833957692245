import { dispatchInit, dispatchPhase, notifyBatchChanged } from "@matoolkit/commands";
import { getBatchWithRunbook, listPhases, transitionBatch, type Db } from "@matoolkit/db";
import { parseRunbookOrThrow } from "@matoolkit/domain";
import { conflict, notFound } from "../http/api-error.ts";

export type AdvanceResult =
  | { readonly action: "init"; readonly batchId: number }
  | {
      readonly action: "phase";
      readonly batchId: number;
      readonly phaseName: string;
      readonly phaseExecutionId: number;
      /** Its position in the runbook (0-based): what …/phases/{seq}/approve names. */
      readonly sequence: number;
      /** `awaiting_approval` when the runbook gates the phase (issue 30): nothing is sent yet. */
      readonly phaseStatus: "dispatched" | "awaiting_approval";
    };

/**
 * 000 "Manual Batch Lifecycle" step 2: dispatch init if it is pending, else the next pending
 * phase in runbook order once the previous one has finished. The status change and the message commit together (outbox), and the
 * status change is SQL-guarded, so two operators clicking at once advance one step, not two.
 */
export async function advanceBatchCommand(db: Db, batchId: number, actor: string): Promise<AdvanceResult> {
  return db.transaction().execute(async (trx) => {
    const batch = await getBatchWithRunbook(trx, batchId);
    if (batch === undefined) throw notFound(`batch ${batchId} does not exist`);
    if (!batch.isManual) throw conflict(`batch ${batchId} is automated: its phases run on schedule`);
    const runbook = parseRunbookOrThrow(batch.yamlContent);
    switch (batch.status) {
      case "detected": {
        if (runbook.init.length === 0) {
          await transitionBatch(trx, batchId, "activate", { reason: "runbook has no init steps", actor });
          return advancePhase(trx, batch.id, batch.runbookName, actor);
        }
        const won = await dispatchInit(trx, {
          batchId: batch.id,
          runbookName: batch.runbookName,
          runbookVersion: batch.runbookVersion,
          reason: "advanced by operator",
          actor,
        });
        if (!won) throw conflict(`batch ${batchId} changed while advancing; try again`);
        await notifyBatchChanged(trx, batchId, "advanced");
        return { action: "init", batchId };
      }
      case "init_dispatched":
        throw conflict(`batch ${batchId} is running its init steps; advance again when it is active`);
      case "active":
        return advancePhase(trx, batch.id, batch.runbookName, actor);
      case "paused":
        throw conflict(`batch ${batchId} is paused; resume it before advancing`);
      case "completed":
      case "failed":
      case "cancelled":
        throw conflict(`batch ${batchId} is ${batch.status}; nothing left to advance`);
      default: {
        const unreachable: never = batch.status;
        throw new Error(`unknown batch status ${String(unreachable)}`);
      }
    }
  });
}

async function advancePhase(
  trx: Db,
  batchId: number,
  runbookName: string,
  actor: string,
): Promise<AdvanceResult> {
  const phases = await listPhases(trx, batchId);
  // Phases run one after another: cutover must not start while pre-checks are still running,
  // and a double click must not skip a phase. Advance again once the running one has finished.
  const running = phases.find((phase) => phase.status === "dispatched");
  if (running !== undefined) {
    throw conflict(
      `phase ${running.phaseName} of batch ${batchId} is still running; advance again when it has finished`,
    );
  }
  // A gate (issue 30) is decided by approve or reject, not by advancing past it.
  const waiting = phases.find((phase) => phase.status === "awaiting_approval");
  if (waiting !== undefined) {
    throw conflict(
      `phase ${waiting.phaseName} of batch ${batchId} is awaiting approval; approve or reject it ` +
        `(POST /api/batches/${batchId}/phases/${waiting.sequence}/approve or …/reject) before advancing`,
    );
  }
  const next = phases.find((phase) => phase.status === "pending");
  if (next === undefined) throw conflict(`batch ${batchId} has no pending phase left`);
  const outcome = await dispatchPhase(trx, {
    batchId,
    runbookName,
    phase: next,
    reason: "advanced by operator",
    actor,
  });
  if (outcome !== "dispatched" && outcome !== "awaiting_approval") {
    throw conflict(`phase ${next.phaseName} changed while advancing; try again`);
  }
  await notifyBatchChanged(trx, batchId, "advanced");
  return {
    action: "phase",
    batchId,
    phaseName: next.phaseName,
    phaseExecutionId: next.id,
    sequence: next.sequence,
    phaseStatus: outcome,
  };
}

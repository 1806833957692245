import { dispatchInit, dispatchPhase } from "@matoolkit/commands";
import {
  getBatch,
  getBatchWithRunbook,
  listPhases,
  lockBatch,
  transitionBatch,
  type Db,
} from "@matoolkit/db";
import { batchMachine, parseRunbookOrThrow } from "@matoolkit/domain";
import { checkBatchCompletion, checkPhaseCompletion } from "../completion.ts";
import { applyApprovalTimeouts, nextApprovalExpiry } from "./approval-timeouts.ts";

export interface BatchProgress {
  /** The batch is terminal: the workflow ends. */
  readonly finished: boolean;
  readonly status: string;
  /**
   * ISO time of the next thing due: a pending phase of an automated batch, or the approval timeout
   * of a phase awaiting approval (issue 30, any batch); null when none.
   */
  readonly nextDueAt: string | null;
}

/**
 * The workflow's one activity: look at the batch in SQL and do whatever is due now. Everything it
 * does is a guarded transition, so running it twice, late, or beside the admin API or the
 * scheduler changes nothing twice. It also heals what a lost message or a crash between a commit
 * and its follow-up could leave behind (a phase whose steps all ended but that was never closed).
 */
export async function progressBatch(db: Db, batchId: number, now: Date): Promise<BatchProgress> {
  const batch = await getBatchWithRunbook(db, batchId);
  if (batch === undefined) return { finished: true, status: "missing", nextDueAt: null };
  if (batchMachine.isTerminal(batch.status)) return { finished: true, status: batch.status, nextDueAt: null };

  // Approval timeouts first: a gate rejected now is a failed phase the completion checks count.
  await applyApprovalTimeouts(db, await listPhases(db, batchId), now);
  for (const phase of await listPhases(db, batchId)) {
    if (phase.status === "dispatched") await checkPhaseCompletion(db, phase.id);
  }
  await checkBatchCompletion(db, batchId);

  if (!batch.isManual) await progressAutomated(db, batch, now);

  const after = await getBatch(db, batchId);
  const status = after?.status ?? "missing";
  const phases = await listPhases(db, batchId);
  const pendingDue = batch.isManual
    ? []
    : phases
        .filter(
          (phase) =>
            phase.status === "pending" && phase.dueAt !== null && phase.dueAt.getTime() > now.getTime(),
        )
        .map((phase) => phase.dueAt!.getTime());
  const expiry = nextApprovalExpiry(phases, now);
  const next = [...pendingDue, ...(expiry === null ? [] : [expiry])];
  return {
    finished: after === undefined || batchMachine.isTerminal(after.status),
    status,
    nextDueAt: next.length === 0 ? null : new Date(Math.min(...next)).toISOString(),
  };
}

/**
 * Automated batches move by time (000 "Automated Batch Lifecycle"): init when detected, then
 * each pending phase once due_at has passed. Manual batches move only on the admin API's advance.
 */
async function progressAutomated(
  db: Db,
  batch: { id: number; status: string; runbookName: string; runbookVersion: number; yamlContent: string },
  now: Date,
): Promise<void> {
  if (batch.status === "detected") {
    const runbook = parseRunbookOrThrow(batch.yamlContent);
    await db.transaction().execute(async (trx) => {
      if (runbook.init.length === 0) {
        await transitionBatch(trx, batch.id, "activate", { reason: "runbook has no init steps" });
      } else {
        await dispatchInit(trx, { ...batch, batchId: batch.id, reason: "batch workflow: new batch" });
      }
    });
    return;
  }
  // Paused (issue 12): phases falling due wait; the resume nudges this workflow, which then
  // dispatches them.
  if (batch.status !== "active") return;
  const due = (await listPhases(db, batch.id)).filter(
    (phase) => phase.status === "pending" && phase.dueAt !== null && phase.dueAt.getTime() <= now.getTime(),
  );
  for (const phase of due) {
    await db.transaction().execute(async (trx) => {
      // Share-locked and read again: a pause committed since the read above holds the phase back.
      // A gated phase waits for approval instead, and the later ones behind it (dispatchPhase).
      if ((await lockBatch(trx, batch.id, "share"))?.status !== "active") return "lost";
      return dispatchPhase(trx, {
        batchId: batch.id,
        runbookName: batch.runbookName,
        phase,
        reason: "batch workflow: phase due",
      });
    });
  }
}

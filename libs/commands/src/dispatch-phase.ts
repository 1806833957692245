import {
  enqueueOutbox,
  hasEarlierPhaseAwaitingApproval,
  setCurrentPhase,
  transitionPhase,
  type Db,
  type PhaseExecution,
} from "@matoolkit/db";
import { phaseDueMessage } from "./messages.ts";
import { notifyBatchChanged } from "./notify-batch-changed.ts";
import { notifyPhaseApproval } from "./notify.ts";

/**
 * What became of a phase that fell due (or was advanced):
 * - `dispatched`: pending → dispatched, its phase-due queued;
 * - `awaiting_approval`: its runbook gates it (issue 30): pending → awaiting_approval, nothing sent
 *   until an operator (or the approval timeout) decides;
 * - `held`: an earlier phase of the batch awaits approval: this one stays pending behind it;
 * - `lost`: another writer moved the phase first (the guarded transition did not hold).
 */
export type PhaseDispatch = "dispatched" | "awaiting_approval" | "held" | "lost";

/**
 * A phase falls due, in the caller's transaction (outbox). Used by the admin API (manual advance),
 * the batch workflow (a phase fell due) and the scheduler. The transition is guarded, so only one
 * of them ever dispatches (or gates) a phase.
 */
export async function dispatchPhase(
  trx: Db,
  args: {
    batchId: number;
    runbookName: string;
    phase: PhaseExecution;
    reason: string;
    /** The operator advancing a manual batch (events.actor); omitted for the system's own dispatch. */
    actor?: string;
  },
): Promise<PhaseDispatch> {
  const { phase } = args;
  // A cutover gate must not be overtaken by the phase after it: later phases wait for its decision.
  if (await hasEarlierPhaseAwaitingApproval(trx, args.batchId, phase.sequence)) return "held";
  if (phase.approvalRequired) return awaitApproval(trx, args);
  const won = await transitionPhase(trx, phase.id, "dispatch", { reason: args.reason, actor: args.actor });
  if (won === undefined) return "lost";
  await sendPhase(trx, args.batchId, args.runbookName, won);
  return "dispatched";
}

/** The phase's step creation starts: current phase, and phase-due (id `phase-due:{id}`, shared by every dispatcher). */
export async function sendPhase(
  trx: Db,
  batchId: number,
  runbookName: string,
  phase: PhaseExecution,
): Promise<void> {
  await setCurrentPhase(trx, batchId, phase.phaseName);
  await enqueueOutbox(trx, [
    phaseDueMessage({
      BatchId: batchId,
      RunbookName: runbookName,
      RunbookVersion: phase.runbookVersion,
      PhaseName: phase.phaseName,
      PhaseExecutionId: phase.id,
    }),
  ]);
}

async function awaitApproval(
  trx: Db,
  args: { batchId: number; phase: PhaseExecution; reason: string; actor?: string },
): Promise<PhaseDispatch> {
  const waiting = await transitionPhase(trx, args.phase.id, "await_approval", {
    reason: `${args.reason}: waiting for approval`,
    actor: args.actor,
  });
  if (waiting === undefined) return "lost";
  // The batch is at this phase now, waiting at its gate.
  await setCurrentPhase(trx, args.batchId, waiting.phaseName);
  await notifyPhaseApproval(trx, {
    type: "phase.awaiting_approval",
    phase: waiting,
    batchId: args.batchId,
    decidedBy: null,
    at: new Date(),
  });
  // The batch workflow sets its timer to the approval's expiry (a scheduler dispatch would
  // otherwise leave it to the workflow's next re-check).
  await notifyBatchChanged(trx, args.batchId, "awaiting-approval");
  return "awaiting_approval";
}

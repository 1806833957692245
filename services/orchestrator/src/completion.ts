import {
  countBatchMemberEnds,
  inTransaction,
  listPhases,
  countPhaseMemberOutcomes,
  phaseReadyToClose,
  transitionBatch,
  transitionPhase,
  type Db,
} from "@matoolkit/db";
import { outcomeOf, phaseMachine, type Outcome } from "@matoolkit/domain";
import type { FollowUps, OrchestratorContext } from "./context.ts";
import { notifyBatchEnded, notifyPhaseEnded } from "./notifications/notify.ts";
import { phasesToCheck } from "./follow-up-phases.ts";

/** Runs the completion checks a handler asked for, each in its own short transaction, after commit. */
export async function runFollowUps(ctx: OrchestratorContext, followUps: FollowUps): Promise<void> {
  const batchIds = new Set(followUps.batchIds);
  const changed = new Set<number>();
  for (const phaseId of phasesToCheck(followUps)) {
    const batchId = await checkPhaseCompletion(ctx.db, phaseId);
    if (batchId !== undefined) {
      batchIds.add(batchId);
      changed.add(batchId);
    }
  }
  for (const batchId of batchIds) {
    for (const phase of await listPhases(ctx.db, batchId)) {
      if (phase.status === "dispatched" && (await checkPhaseCompletion(ctx.db, phase.id)) !== undefined) {
        changed.add(batchId);
      }
    }
    if (await checkBatchCompletion(ctx.db, batchId)) changed.add(batchId);
  }
  // The workflow would notice at its next re-check; the nudge makes it notice now.
  for (const batchId of changed) await ctx.batchChanged?.(batchId);
}

/**
 * 000 CheckPhaseCompletionAsync: once every step of the phase is terminal, the phase is
 * `completed` if at least one member succeeded in all of its steps, else `failed`.
 * Returns the batch id when the phase just became terminal.
 */
export async function checkPhaseCompletion(db: Db, phaseId: number): Promise<number | undefined> {
  // Runs after every result: one statement while the phase cannot close, the aggregate only once.
  // Not while phase-due is still creating the steps of later members (in chunks), whatever the
  // members started so far have finished: its last chunk asks for this check again.
  if (!(await phaseReadyToClose(db, phaseId))) return undefined;
  // The end, its outcome and its notification commit together (issue 12): a reader never sees a
  // completed phase without its outcome, and the notification goes out iff this check won.
  return inTransaction(db, async (trx) => {
    const { members, succeeded, failed, open } = await countPhaseMemberOutcomes(trx, phaseId);
    // No steps yet: phase-due has not created them (the admin API marks the phase dispatched
    // before publishing it). phase-due itself closes a phase that has no member to run.
    if (members === 0) return undefined;
    // Steps committed by phase-due between the probe above and this count: still running. (Found
    // by the Dapr end-to-end runs, where phase-due arrives later: a phase closed as failed while
    // its steps had just been created.)
    if (open > 0) return undefined;
    const event = succeeded > 0 ? "complete" : "fail";
    // `complete` iff some member succeeded, so outcomeOf never says `failed` for a completed phase.
    const outcome = outcomeOf({ succeeded, failed });
    const won = await transitionPhase(trx, phaseId, event, {
      reason: `${succeeded} of ${members} members succeeded`,
      set: { outcome, succeededMembers: succeeded, failedMembers: failed },
    });
    if (won === undefined) return undefined;
    await notifyPhaseEnded(trx, {
      phase: { ...won, status: event === "complete" ? "completed" : "failed" },
      batchId: won.batchId,
      outcome,
      counts: { succeededMembers: succeeded, failedMembers: failed },
      at: new Date(),
    });
    return won.batchId;
  });
}

/**
 * 000 CheckBatchCompletionAsync: all phases terminal → completed if any phase completed, else
 * failed. The outcome and member counts are stamped by the same statement, and the notification
 * queued in the same transaction.
 */
export async function checkBatchCompletion(db: Db, batchId: number): Promise<boolean> {
  const phases = await listPhases(db, batchId);
  if (phases.length === 0 || phases.some((phase) => !phaseMachine.isTerminal(phase.status))) return false;
  const completed = phases.filter((phase) => phase.status === "completed").length;
  const event = completed > 0 ? "complete" : "fail";
  return inTransaction(db, async (trx) => {
    const members = await countBatchMemberEnds(trx, batchId);
    const end = batchEnd(event, members, phases);
    const won = await transitionBatch(trx, batchId, event, {
      reason: `${completed} of ${phases.length} phases completed`,
      set: { outcome: end.outcome, succeededMembers: end.succeeded, failedMembers: end.failed },
    });
    if (won === undefined) return false;
    await notifyBatchEnded(trx, {
      batchId,
      status: event === "complete" ? "completed" : "failed",
      outcome: end.outcome,
      counts: { succeededMembers: end.succeeded, failedMembers: end.failed },
      at: new Date(),
    });
    return true;
  });
}

/**
 * A batch's outcome (issue 12; ARCHITECTURE "Outcomes"). Succeeded members are those still
 * `active` at the end, i.e. through every phase, and only a completed batch has any; failed ones
 * are those a step failure isolated. `failed` status ⇔ `failed` outcome. A completed batch
 * succeeded when no member failed and every phase that ran succeeded for all its members; any
 * failed member or any phase short of `succeeded` makes it `partially_succeeded` (some phase
 * completed, so something was done, even if no single member went all the way).
 */
export function batchEnd(
  event: "complete" | "fail",
  members: { readonly active: number; readonly failed: number },
  phases: readonly { readonly status: string; readonly outcome: Outcome | null }[],
): { outcome: Outcome; succeeded: number; failed: number } {
  if (event === "fail") return { outcome: "failed", succeeded: 0, failed: members.failed };
  // A phase ended before outcomes existed (migration 0009) has none: it counts by its status.
  const phaseShort = phases.some(
    (phase) =>
      phase.status === "failed" || phase.outcome === "partially_succeeded" || phase.outcome === "failed",
  );
  const outcome = members.failed === 0 && !phaseShort ? "succeeded" : "partially_succeeded";
  return { outcome, succeeded: members.active, failed: members.failed };
}

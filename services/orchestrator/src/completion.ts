import {
  getPhase,
  listPhases,
  countPhaseMemberOutcomes,
  phaseHasOpenSteps,
  transitionBatch,
  transitionPhase,
  type Db,
} from "@matoolkit/db";
import { phaseMachine } from "@matoolkit/domain";
import type { FollowUps, OrchestratorContext } from "./context.ts";

/** Runs the completion checks a handler asked for, each in its own short transaction, after commit. */
export async function runFollowUps(ctx: OrchestratorContext, followUps: FollowUps): Promise<void> {
  const batchIds = new Set(followUps.batchIds);
  const changed = new Set<number>();
  for (const phaseId of followUps.phaseIds) {
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
  const phase = await getPhase(db, phaseId);
  if (phase === undefined || phase.status !== "dispatched") return undefined;
  // phase-due is still creating the steps of later members (in chunks): not done, whatever the
  // members started so far have finished. Its last chunk asks for this check again.
  if (phase.stepsCreatedAt === null) return undefined;
  // Runs after every result: one index probe while any step is open, the aggregate only once.
  if (await phaseHasOpenSteps(db, phaseId)) return undefined;
  const { members, succeeded, open } = await countPhaseMemberOutcomes(db, phaseId);
  // No steps yet: phase-due has not created them (the admin API marks the phase dispatched before
  // publishing it). phase-due itself closes a phase that has no member to run.
  if (members === 0) return undefined;
  // Steps committed by phase-due between the probe above and this count: still running. (Found
  // by the Dapr end-to-end runs, where phase-due arrives later: a phase closed as failed while
  // its steps had just been created.)
  if (open > 0) return undefined;
  const event = succeeded > 0 ? "complete" : "fail";
  const reason = `${succeeded} of ${members} members succeeded`;
  const won = await transitionPhase(db, phaseId, event, { reason });
  return won === undefined ? undefined : phase.batchId;
}

/** 000 CheckBatchCompletionAsync: all phases terminal → completed if any phase completed, else failed. */
export async function checkBatchCompletion(db: Db, batchId: number): Promise<boolean> {
  const phases = await listPhases(db, batchId);
  if (phases.length === 0 || phases.some((phase) => !phaseMachine.isTerminal(phase.status))) return false;
  const completed = phases.filter((phase) => phase.status === "completed").length;
  const won = await transitionBatch(db, batchId, completed > 0 ? "complete" : "fail", {
    reason: `${completed} of ${phases.length} phases completed`,
  });
  return won !== undefined;
}

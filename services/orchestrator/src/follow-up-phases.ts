import type { FollowUps } from "./context.ts";

/**
 * Which phases a handler transaction's follow-ups look at after its commit (issue 29: on Dapr,
 * where a result transaction holds a few results, these two looks were two of its ~12 statements).
 *
 * Every phase in `phaseIds` (touched in any way other than a step succeeding or being dispatched:
 * a failure, a poll, a member that finished its chain, a stale result) is both checked and nudged,
 * as before. A phase that only saw steps succeed and others dispatched:
 * - is checked for completion only if nothing was dispatched in it: a step this transaction
 *   dispatched is open at the commit, so the phase cannot close now, and the transaction that
 *   ends that step checks it after its own commit;
 * - is nudged (its start window, phase-start-pump.ts) only if fewer steps were dispatched than
 *   succeeded: the window counts a phase's dispatched steps, and a member moving from one step to
 *   the next leaves the count as it was, so the window gained no room.
 */
export function phasesToCheck(followUps: FollowUps): Set<number> {
  const phases = new Set(followUps.phaseIds);
  for (const phaseId of followUps.succeededByPhase.keys()) {
    if ((followUps.dispatchedByPhase.get(phaseId) ?? 0) === 0) phases.add(phaseId);
  }
  return phases;
}

export function phasesToNudge(followUps: FollowUps): Set<number> {
  const phases = new Set(followUps.phaseIds);
  for (const [phaseId, succeeded] of followUps.succeededByPhase) {
    if ((followUps.dispatchedByPhase.get(phaseId) ?? 0) < succeeded) phases.add(phaseId);
  }
  return phases;
}

/** Adds one to `phaseId`'s count. */
export function countByPhase(counts: Map<number, number>, phaseId: number): void {
  counts.set(phaseId, (counts.get(phaseId) ?? 0) + 1);
}

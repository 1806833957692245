import {
  getPhase,
  listPhases,
  listStepsByPhase,
  transitionBatch,
  transitionPhase,
  type Db,
} from "@matoolkit/db";
import { executionMachine, phaseMachine, type ExecutionStatus } from "@matoolkit/domain";
import type { FollowUps, OrchestratorContext } from "./context.ts";

/** Runs the completion checks a handler asked for, each in its own short transaction, after commit. */
export async function runFollowUps(ctx: OrchestratorContext, followUps: FollowUps): Promise<void> {
  const batchIds = new Set(followUps.batchIds);
  for (const phaseId of followUps.phaseIds) {
    const batchId = await checkPhaseCompletion(ctx.db, phaseId);
    if (batchId !== undefined) batchIds.add(batchId);
  }
  for (const batchId of batchIds) {
    for (const phase of await listPhases(ctx.db, batchId)) {
      if (phase.status === "dispatched") await checkPhaseCompletion(ctx.db, phase.id);
    }
    await checkBatchCompletion(ctx.db, batchId);
  }
}

/**
 * 000 CheckPhaseCompletionAsync: once every step of the phase is terminal, the phase is
 * `completed` if at least one member succeeded in all of its steps, else `failed`.
 * Returns the batch id when the phase just became terminal.
 */
export async function checkPhaseCompletion(db: Db, phaseId: number): Promise<number | undefined> {
  const phase = await getPhase(db, phaseId);
  if (phase === undefined || phase.status !== "dispatched") return undefined;
  const steps = await listStepsByPhase(db, phaseId);
  if (steps.some((step) => !executionMachine.isTerminal(step.status as ExecutionStatus))) return undefined;
  const byMember = new Map<number, string[]>();
  for (const step of steps) {
    const statuses = byMember.get(step.batchMemberId) ?? [];
    statuses.push(step.status);
    byMember.set(step.batchMemberId, statuses);
  }
  const succeeded = [...byMember.values()].filter((statuses) =>
    statuses.every((s) => s === "succeeded"),
  ).length;
  const event = succeeded > 0 ? "complete" : "fail";
  const reason = `${succeeded} of ${byMember.size} members succeeded`;
  const won = await transitionPhase(db, phaseId, event, { reason });
  return won === undefined ? undefined : phase.batchId;
}

/** 000 CheckBatchCompletionAsync: all phases terminal → completed if any phase completed, else failed. */
export async function checkBatchCompletion(db: Db, batchId: number): Promise<void> {
  const phases = await listPhases(db, batchId);
  if (phases.length === 0 || phases.some((phase) => !phaseMachine.isTerminal(phase.status))) return;
  const completed = phases.filter((phase) => phase.status === "completed").length;
  await transitionBatch(db, batchId, completed > 0 ? "complete" : "fail", {
    reason: `${completed} of ${phases.length} phases completed`,
  });
}

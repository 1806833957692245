import {
  getPhaseForUpdate,
  insertSteps,
  listMembers,
  listStepsByPhase,
  transitionPhase,
  type Db,
} from "@matoolkit/db";
import { batchMachine, type PhaseDueMessage } from "@matoolkit/domain";
import { loadBatchInfo, variablesFor } from "../batch-info.ts";
import type { FollowUps, OrchestratorContext } from "../context.ts";
import { prepareExecution } from "../prepare-execution.ts";
import { advanceMember } from "../progression.ts";

/**
 * 000 PhaseDueHandler: create the phase's step executions for every active member (idempotent:
 * a unique key on phase/member/index makes a duplicate message create nothing), then start each
 * member on its first pending step. A step whose templates cannot resolve fails when its turn
 * comes (template.unresolved), isolating that member only.
 */
export class BatchNotReadyError extends Error {}

export async function handlePhaseDue(
  trx: Db,
  ctx: OrchestratorContext,
  message: PhaseDueMessage,
  followUps: FollowUps,
): Promise<void> {
  // Locked (getPhaseForUpdate): a concurrent member-added or duplicate phase-due waits its turn.
  const phase = await getPhaseForUpdate(trx, message.PhaseExecutionId);
  if (phase === undefined) {
    ctx.logger.warn(
      { phaseExecutionId: message.PhaseExecutionId },
      "phase-due for a phase that does not exist: ignored",
    );
    return;
  }
  if (phase.status !== "pending" && phase.status !== "dispatched") return;
  const batch = await loadBatchInfo(trx, phase.batchId);
  // A cancelled batch has cancelled this phase too (under this phase's lock), so only an ended one gets here.
  if (batch === undefined || batchMachine.isTerminal(batch.status)) return;
  if (batch.status !== "active") {
    // Init has not finished: throwing redelivers the message later (bounded, then dead-lettered).
    throw new BatchNotReadyError(`batch ${batch.id} is ${batch.status}; phases wait for init`);
  }
  if (phase.status === "pending")
    await transitionPhase(trx, phase.id, "dispatch", { reason: "phase-due received" });

  const runbook = await ctx.runbooks.get(trx, batch.runbookName, phase.runbookVersion);
  const definition = runbook.phases.find((candidate) => candidate.name === phase.phaseName);
  if (definition === undefined)
    throw new Error(`phase ${phase.phaseName} is not in runbook version ${phase.runbookVersion}`);
  const members = (await listMembers(trx, batch.id)).filter((member) => member.status === "active");

  const existing = new Set((await listStepsByPhase(trx, phase.id)).map((step) => step.batchMemberId));
  const rows = members
    .filter((member) => !existing.has(member.id))
    .flatMap((member) =>
      definition.steps.map((step, index) => ({
        ...prepareExecution(step, index, runbook, variablesFor(batch, member)),
        batchId: batch.id,
        phaseExecutionId: phase.id,
        batchMemberId: member.id,
      })),
    );
  if (rows.length > 0) await insertSteps(trx, rows);
  if (members.length === 0 && existing.size === 0) {
    // Nobody to run: close the phase here, since completion checks wait for steps to exist.
    await transitionPhase(trx, phase.id, "fail", { reason: "no active member" });
    followUps.batchIds.add(batch.id);
    return;
  }
  for (const member of members) {
    await advanceMember(trx, ctx, { batch, phaseExecutionId: phase.id, memberId: member.id, followUps });
  }
  followUps.phaseIds.add(phase.id);
}

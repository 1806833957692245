import {
  getPhaseForUpdate,
  createPendingSteps,
  listMembers,
  listStepsByPhase,
  transitionPhase,
} from "@matoolkit/db";
import { batchMachine, type PhaseDueMessage } from "@matoolkit/domain";
import { loadBatchInfo, variablesFor } from "../batch-info.ts";
import type { HandlerScope } from "../context.ts";
import { prepareExecution } from "../prepare-execution.ts";
import { advanceMembers } from "../progression.ts";

/**
 * Members started per transaction: the first chunk commits with the phase's steps, so jobs flow
 * at once; the others follow, each in its own short transaction, instead of one transaction that
 * holds every job of a 10,000-member phase until the last one is written.
 */
export const PHASE_START_CHUNK = 500;

export class BatchNotReadyError extends Error {}

/**
 * 000 PhaseDueHandler: create the phase's step executions for every active member (idempotent:
 * a unique key on phase/member/index makes a duplicate message create nothing), then start each
 * member on its first pending step. A step whose templates cannot resolve fails when its turn
 * comes (template.unresolved), isolating that member only.
 *
 * Every step is created in this transaction, so the phase has open steps for every member before
 * anything can complete it; only the starts are chunked (`followUps.memberStarts`, run after
 * commit). A crash between chunks leaves pending first steps and an unacknowledged message: the
 * redelivered phase-due starts them (a started member has no pending step at the head of its
 * chain, so nothing runs twice).
 */
export async function handlePhaseDue(scope: HandlerScope, message: PhaseDueMessage): Promise<void> {
  const { trx } = scope;
  // Locked (getPhaseForUpdate): a concurrent member-added or duplicate phase-due waits its turn.
  const phase = await getPhaseForUpdate(trx, message.PhaseExecutionId);
  if (phase === undefined) {
    scope.logger.warn(
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
  const started =
    phase.status === "pending"
      ? await transitionPhase(trx, phase.id, "dispatch", { reason: "phase-due received" })
      : phase;

  const runbook = await scope.runbooks.get(trx, batch.runbookName, phase.runbookVersion);
  const definition = runbook.phases.find((candidate) => candidate.name === phase.phaseName);
  if (definition === undefined)
    throw new Error(`phase ${phase.phaseName} is not in runbook version ${phase.runbookVersion}`);
  const members = (await listMembers(trx, batch.id)).filter((member) => member.status === "active");
  if (members.length === 0) {
    if ((await listStepsByPhase(trx, phase.id)).length > 0) return;
    // Nobody to run: close the phase here, since completion checks wait for steps to exist.
    await transitionPhase(trx, phase.id, "fail", { reason: "no active member" });
    scope.followUps.batchIds.add(batch.id);
    return;
  }
  await createPendingSteps(
    trx,
    members.flatMap((member) =>
      definition.steps.map((step, index) => ({
        ...prepareExecution(step, index, runbook, variablesFor(batch, member)),
        batchId: batch.id,
        phaseExecutionId: phase.id,
        batchMemberId: member.id,
      })),
    ),
  );
  const pairs = members.map((member) => ({ memberId: member.id, phaseExecutionId: phase.id }));
  const known = {
    phases: new Map([[phase.id, started ?? { ...phase, status: "dispatched" as const }]]),
    batches: new Map([[batch.id, batch]]),
  };
  await advanceMembers(scope, pairs.slice(0, PHASE_START_CHUNK), known);
  for (let offset = PHASE_START_CHUNK; offset < pairs.length; offset += PHASE_START_CHUNK) {
    scope.followUps.memberStarts.push(pairs.slice(offset, offset + PHASE_START_CHUNK));
  }
  scope.followUps.phaseIds.add(phase.id);
}

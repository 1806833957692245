import {
  cancelOpenStepsOfMember,
  getPhaseForUpdate,
  getBatchWithRunbook,
  getMember,
  createPendingSteps,
  listPhases,
  listStepsByMember,
  lockBatch,
  transitionMember,
} from "@matoolkit/db";
import {
  resolveStep,
  TemplateResolutionError,
  type MemberAddedMessage,
  type MemberRemovedMessage,
} from "@matoolkit/domain";
import { loadBatchInfo, variablesFor } from "../batch-info.ts";
import type { HandlerScope } from "../context.ts";
import { sendUntrackedJob } from "../outgoing.ts";
import { prepareExecution } from "../prepare-execution.ts";
import { advanceMember } from "../progression.ts";

/**
 * 000 "Member Catch-Up Protocol": a member that joins an active batch gets the steps of every
 * phase already dispatched or completed; pending phases will include it when they fall due.
 * While the batch is paused the steps are created but not started.
 */
export async function handleMemberAdded(scope: HandlerScope, message: MemberAddedMessage): Promise<void> {
  const { trx } = scope;
  const member = await getMember(trx, message.BatchMemberId);
  if (member === undefined || member.status !== "active" || member.batchId !== message.BatchId) return;
  // Shared lock: catch-up steps and a batch cancel take turns (see cancelBatch); catch-ups don't.
  await lockBatch(trx, member.batchId, "share");
  const batch = await loadBatchInfo(trx, member.batchId);
  // Paused (issue 12): the catch-up steps are created now, but advanceMember starts nothing
  // (acceptsDispatch); the resume's phase-due messages start them.
  if (batch === undefined || (batch.status !== "active" && batch.status !== "paused")) return;
  const existing = new Set((await listStepsByMember(trx, member.id)).map((step) => step.phaseExecutionId));
  for (const listed of await listPhases(trx, batch.id)) {
    if ((listed.status !== "dispatched" && listed.status !== "completed") || existing.has(listed.id))
      continue;
    const phase = await getPhaseForUpdate(trx, listed.id);
    if (phase === undefined || (phase.status !== "dispatched" && phase.status !== "completed")) continue;
    // A dispatched phase whose steps phase-due has not finished creating (it has not run yet: the
    // admin API marks a phase dispatched before publishing it; or it is between chunks) is left
    // to phase-due: its chunks read the active members by id as they go, so they include this
    // one. Catch-up steps created now could let the phase complete before the others have steps.
    if (phase.status === "dispatched" && phase.stepsCreatedAt === null) continue;
    const runbook = await scope.runbooks.get(trx, batch.runbookName, phase.runbookVersion);
    const definition = runbook.phases.find((candidate) => candidate.name === phase.phaseName);
    if (definition === undefined) continue;
    const rows = definition.steps.map((step, index) => ({
      ...prepareExecution(step, index, runbook, variablesFor(batch, member)),
      batchId: batch.id,
      phaseExecutionId: phase.id,
      batchMemberId: member.id,
    }));
    await createPendingSteps(trx, rows);
    await advanceMember(scope, { memberId: member.id, phaseExecutionId: phase.id });
  }
}

/**
 * 000 "Member Removal Protocol": cancel the member's open steps, then send the runbook's
 * on_member_removed steps (fire-and-forget) with the member's data.
 */
export async function handleMemberRemoved(scope: HandlerScope, message: MemberRemovedMessage): Promise<void> {
  const { trx } = scope;
  const member = await getMember(trx, message.BatchMemberId);
  if (member === undefined || member.batchId !== message.BatchId) return;
  if (member.status === "active")
    await transitionMember(trx, member.id, "remove", { reason: "member-removed received" });
  const cancelled = await cancelOpenStepsOfMember(trx, member.id, "member removed");
  scope.followUps.batchIds.add(member.batchId);
  const batch = await getBatchWithRunbook(trx, member.batchId);
  const info = await loadBatchInfo(trx, member.batchId);
  if (batch === undefined || info === undefined) return;
  const runbook = await scope.runbooks.get(trx, batch.runbookName, batch.runbookVersion);
  for (const [index, step] of runbook.onMemberRemoved.entries()) {
    try {
      const resolved = resolveStep(step, variablesFor(info, member));
      await sendUntrackedJob(trx, {
        jobId: `removed-member-${member.id}-${index}`,
        batchId: batch.id,
        workerId: step.workerId,
        functionName: resolved.functionName,
        parameters: resolved.params,
        // The worker contract requires a correlation; these jobs are untracked, so the result is
        // matched to no execution and ignored.
        correlation: {
          StepExecutionId: member.id,
          IsInitStep: false,
          RunbookName: batch.runbookName,
          RunbookVersion: batch.runbookVersion,
        },
      });
    } catch (error) {
      if (!(error instanceof TemplateResolutionError)) throw error;
      scope.logger.error(
        { batchId: batch.id, memberId: member.id, missing: error.missing },
        "on_member_removed step not sent: unresolved template variables",
      );
    }
  }
  scope.logger.info(
    { batchId: batch.id, memberId: member.id, cancelledSteps: cancelled.length },
    "member removed",
  );
}

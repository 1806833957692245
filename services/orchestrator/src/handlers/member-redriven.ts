import {
  createPendingSteps,
  getMember,
  getPhaseForUpdate,
  listPhases,
  listStepsByMember,
  lockBatch,
  transitionBatch,
  transitionPhase,
  type MemberPhase,
  type PhaseExecution,
  type StepExecution,
} from "@matoolkit/db";
import type { MemberRedrivenMessage, PhaseStatus } from "@matoolkit/domain";
import { loadBatchInfo, variablesFor, type BatchInfo } from "../batch-info.ts";
import type { HandlerScope } from "../context.ts";
import { prepareExecution } from "../prepare-execution.ts";
import { advanceMembers } from "../progression.ts";

/** Phases a redriven member runs again or catches up on: those that have run (or are running). */
const PHASES_THAT_RAN: readonly PhaseStatus[] = ["dispatched", "completed", "failed"];
const OPEN_STEP = new Set(["pending", "dispatched", "polling"]);

/**
 * Issue 12, after an operator's redrive (the admin API has already moved the member to `active`,
 * its failed steps to `pending` and their ended phases back to `dispatched`, in one transaction):
 * start the member again, like the member-added catch-up.
 *
 * For every phase that has run, in runbook order: a phase that ran while the member was failed
 * never created its steps (phase-due takes active members only): they are created now; a phase
 * where the member has work (those new steps, or its redriven ones) and that has ended is
 * reopened, so it cannot be counted complete while the member runs in it. Then the first of those
 * (member, phase) chains starts at its first step that has not succeeded, with the job id
 * `step-{id}-redrive-{n}` (jobIdFor reads redrive_count); the later ones start in phase order as
 * the member finishes each (progression.ts, startNextPhases).
 *
 * Also repairs the one race the redrive transaction cannot close: a completion check that read
 * "no open step" before the redrive committed may complete the phase (and then the batch) just
 * after it. Here, under the batch lock, such a phase or batch is reopened before anything starts.
 *
 * The batch is locked FOR NO KEY UPDATE (not FOR SHARE as member-added does): this handler may
 * reopen it, and upgrading a share lock would deadlock two redriven members of one batch. Lock
 * order batch → phase → steps, as phase-due and a cancel take them. Idempotent: a duplicate finds
 * the steps created and the chains started, and starts nothing twice.
 *
 * Paused batch: the steps are created and phases reopened, nothing is sent; the resume's phase-due
 * messages start the member. Cancelled (or no longer active member): nothing to do.
 */
export async function handleMemberRedriven(
  scope: HandlerScope,
  message: MemberRedrivenMessage,
): Promise<void> {
  const { trx } = scope;
  const unlocked = await getMember(trx, message.BatchMemberId);
  if (unlocked === undefined || unlocked.batchId !== message.BatchId) return;
  await lockBatch(trx, unlocked.batchId, "update");
  const batch = await loadBatchInfo(trx, unlocked.batchId);
  // Read again under the lock: a cancel may have committed meanwhile (its steps are cancelled),
  // or the member may already have failed again (a resume started it first).
  const member = await getMember(trx, unlocked.id);
  if (batch === undefined || member?.status !== "active") return;
  if (!mayRestart(batch)) return;

  const stepsByPhase = groupByPhase(await listStepsByMember(trx, member.id));
  const pairs: MemberPhase[] = [];
  for (const listed of await listPhases(trx, batch.id)) {
    // A rejected gate (issue 30) failed without running: a redrive does not overrule its no-go.
    if (!PHASES_THAT_RAN.includes(listed.status) || listed.approvalDecision === "rejected") continue;
    const own = stepsByPhase.get(listed.id) ?? [];
    const missing = own.length === 0;
    if (!missing && !own.some((step) => OPEN_STEP.has(step.status))) continue;
    const phase = await getPhaseForUpdate(trx, listed.id);
    if (phase === undefined || !PHASES_THAT_RAN.includes(phase.status)) continue;
    if (missing && !(await createMissingSteps(scope, { batch, phase, member }))) continue;
    if (phase.status === "completed" || phase.status === "failed") {
      await transitionPhase(trx, phase.id, "reopen", { reason: `member ${member.id} redriven` });
    }
    pairs.push({ memberId: member.id, phaseExecutionId: phase.id });
  }
  if (pairs.length === 0) return;

  let status = batch.status;
  if (status === "completed" || status === "failed") {
    const reopened = await transitionBatch(trx, batch.id, "reopen", {
      reason: `member ${member.id} redriven`,
    });
    status = reopened?.status ?? status;
  }
  scope.followUps.batchIds.add(batch.id);
  // Paused: nothing is sent now; the resume's phase-due starts the chains' pending heads.
  if (status !== "active") return;
  // In phase order, as the batch ran them: the first phase with work now; each later one when
  // the member has finished the one before (progression.ts, startNextPhases).
  await advanceMembers(scope, pairs.slice(0, 1), { batches: new Map([[batch.id, { ...batch, status }]]) });
}

/** Active and paused batches restart the member; so do ended ones (the completion race above). */
function mayRestart(batch: BatchInfo): boolean {
  switch (batch.status) {
    case "active":
    case "paused":
    case "completed":
    case "failed":
      return true;
    case "detected":
    case "init_dispatched":
    case "cancelled":
      return false;
    default: {
      const unreachable: never = batch.status;
      throw new Error(`unknown batch status ${String(unreachable)}`);
    }
  }
}

/**
 * The member's steps of a phase it never got, as phase-due creates them (templates resolved
 * against the member's data now). Also when phase-due is still creating the phase's steps in
 * chunks: its cursor may have passed this member while it was failed, and the phase cannot
 * complete before its last chunk (steps_created_at), so creating them now is safe; a later chunk
 * that reaches the member skips what exists. False when the runbook no longer has the phase.
 */
async function createMissingSteps(
  scope: HandlerScope,
  args: {
    batch: BatchInfo;
    phase: PhaseExecution;
    member: { id: number; dataJson: unknown; workerDataJson: unknown };
  },
): Promise<boolean> {
  const { batch, phase, member } = args;
  const runbook = await scope.runbooks.get(scope.trx, batch.runbookName, phase.runbookVersion);
  const definition = runbook.phases.find((candidate) => candidate.name === phase.phaseName);
  if (definition === undefined) return false;
  await createPendingSteps(
    scope.trx,
    definition.steps.map((step, index) => ({
      ...prepareExecution(step, index, runbook, variablesFor(batch, member)),
      batchId: batch.id,
      phaseExecutionId: phase.id,
      batchMemberId: member.id,
    })),
  );
  return true;
}

function groupByPhase(steps: readonly StepExecution[]): Map<number, StepExecution[]> {
  const groups = new Map<number, StepExecution[]>();
  for (const step of steps)
    groups.set(step.phaseExecutionId, [...(groups.get(step.phaseExecutionId) ?? []), step]);
  return groups;
}

import {
  countMemberRedrives,
  enqueueOutbox,
  getBatchMembersByIds,
  getInit,
  getMember,
  getPhasesByIds,
  getStep,
  listFailedMembers,
  lockBatch,
  redriveMembers,
  redriveStepsOfMembers,
  transitionBatch,
  transitionPhase,
  type Batch,
  type BatchMember,
  type Db,
  type PhaseExecution,
  type StepExecution,
} from "@matoolkit/db";
import { jobIdFor, memberRedrivenEnvelope, type BatchStatus } from "@matoolkit/domain";
import { notifyBatchChanged } from "./notify-batch-changed.ts";

/** What to redrive: exactly one of the request body's forms (POST /api/batches/{id}/redrive). */
export type RedriveTarget =
  | { readonly kind: "failedMembers" }
  | { readonly kind: "members"; readonly memberIds: readonly number[] }
  | { readonly kind: "step"; readonly stepExecutionId: number }
  | { readonly kind: "init"; readonly initExecutionId: number };

export interface RedrivenStep {
  readonly id: number;
  readonly phaseExecutionId: number;
  readonly stepName: string;
  /** The job id its next run will carry: `step-{id}-redrive-{n}`. */
  readonly jobId: string;
}

export interface RedriveResult {
  readonly batchId: number;
  /** After the redrive: `active` (reopened if it had ended) or `paused` (nothing sent until resume). */
  readonly batchStatus: BatchStatus;
  readonly redriven: ReadonlyArray<{ readonly memberId: number; readonly steps: readonly RedrivenStep[] }>;
}

/**
 * Why nothing was redriven: `not_found` (the batch, or a member, step or init that is not this
 * batch's) or `conflict` (a state that does not allow it). `problems` names each refused member id
 * by its position in the request (`memberIds.3`). Ids only: never member keys (PII).
 */
export interface RedriveRefusal {
  readonly kind: "not_found" | "conflict";
  readonly message: string;
  readonly problems?: ReadonlyArray<{ readonly path: string; readonly message: string }>;
}

export type RedriveOutcome =
  | { readonly ok: true; readonly result: RedriveResult }
  | { readonly ok: false; readonly refusal: RedriveRefusal };

export const REDRIVE_REASON = "redriven by operator";
/** Ids named in a refusal's message; `problems` lists them all. */
const MAX_IDS_IN_MESSAGE = 10;

/** Thrown inside the transaction so a refusal found after a write rolls it back; returned as a value. */
class Refused extends Error {
  constructor(readonly refusal: RedriveRefusal) {
    super(refusal.message);
  }
}

/**
 * Issue 12: failed members run again from their point of failure. In the caller's transaction,
 * under the batch's row lock (FOR NO KEY UPDATE, as cancel and pause take it, so they take turns
 * with this); nothing is written unless every requested member can be redriven (a refusal is
 * returned, and the caller must roll back if it wrote anything else):
 *
 * 1. members failed → active (memberMachine `redrive`);
 * 2. their failed, poll_timeout and cancelled steps in phases that have run → pending (execution
 *    `redrive`: redrive_count + 1, so their next job ids are `step-{id}-redrive-{n}`, and a late
 *    result of the old attempt matches no current job id and is ignored); succeeded steps stay;
 * 3. the ended phases of those steps → dispatched (phase `reopen`), and the batch if it had ended
 *    (batch `reopen`), so neither can end again before the members are done;
 * 4. one member-redriven message per member (outbox): the orchestrator creates the steps of phases
 *    that ran while the member was failed and starts it (handlers/member-redriven.ts); then the
 *    batch-changed nudge.
 *
 * Every status change carries `actor` as events.actor. Refused: a batch that is cancelled or has
 * not started its phases, a member that is not failed, a step that did not fail, an init step.
 */
export async function redriveBatch(
  trx: Db,
  args: { readonly batchId: number; readonly target: RedriveTarget; readonly actor: string },
): Promise<RedriveOutcome> {
  try {
    return { ok: true, result: await redrive(trx, args.batchId, args.target, args.actor) };
  } catch (error) {
    if (error instanceof Refused) return { ok: false, refusal: error.refusal };
    throw error;
  }
}

async function redrive(
  trx: Db,
  batchId: number,
  target: RedriveTarget,
  actor: string,
): Promise<RedriveResult> {
  const batch = await lockBatch(trx, batchId, "update");
  if (batch === undefined) throw notFound(`batch ${batchId} does not exist`);
  refuseUnlessRedrivable(batch);
  const members = await membersToRedrive(trx, batch, target);
  const memberIds = members.map((member) => member.id);
  const options = { actor, reason: REDRIVE_REASON };

  const moved = await redriveMembers(trx, batchId, memberIds, options);
  // `failed` is left only through a redrive, which holds this batch lock: cannot happen; if it
  // did, the refusal makes the caller roll back what was written.
  if (moved.length !== memberIds.length) throw conflict(`members of batch ${batchId} changed; try again`);
  const steps = await redriveStepsOfMembers(trx, batchId, memberIds, options);

  const phaseIds = [...new Set(steps.map((step) => step.phaseExecutionId))];
  const phases = await getPhasesByIds(trx, phaseIds);
  const ended = phases
    .filter((phase) => phase.status === "completed" || phase.status === "failed")
    .sort((a, b) => a.id - b.id);
  for (const phase of ended) await transitionPhase(trx, phase.id, "reopen", options);
  let batchStatus: BatchStatus = batch.status;
  if (batch.status === "completed" || batch.status === "failed") {
    const reopened = await transitionBatch(trx, batchId, "reopen", options);
    if (reopened === undefined) throw conflict(`batch ${batchId} changed while redriving; try again`);
    batchStatus = reopened.status;
  }

  const redrives = await countMemberRedrives(trx, batchId, memberIds);
  await enqueueOutbox(
    trx,
    memberIds.map((memberId) =>
      memberRedrivenEnvelope({ BatchId: batchId, BatchMemberId: memberId }, redrives.get(memberId) ?? 1),
    ),
  );
  await notifyBatchChanged(trx, batchId, "redriven");
  return { batchId, batchStatus, redriven: describe(memberIds, steps, phases) };
}

/**
 * A cancelled batch stays cancelled (no event leaves it); one that has not started its phases has
 * no member step to redrive; a purged one has no data left to run with. Active, paused (the steps wait for the resume) and ended batches can.
 */
function refuseUnlessRedrivable(batch: Batch): void {
  // Its members' data and params are gone (retention, issue 31): a rerun would act on nothing.
  if (batch.purgedAt !== null) {
    throw conflict(`batch ${batch.id}'s personal data was purged; a purged batch cannot be redriven`);
  }
  switch (batch.status) {
    case "active":
    case "paused":
    case "completed":
    case "failed":
      return;
    case "cancelled":
      throw conflict(`batch ${batch.id} is cancelled; a cancelled batch cannot be redriven`);
    case "detected":
    case "init_dispatched":
      throw conflict(`batch ${batch.id} is ${batch.status}; its phases have not started, nothing to redrive`);
    default: {
      const unreachable: never = batch.status;
      throw new Error(`unknown batch status ${String(unreachable)}`);
    }
  }
}

async function membersToRedrive(trx: Db, batch: Batch, target: RedriveTarget): Promise<BatchMember[]> {
  switch (target.kind) {
    case "failedMembers": {
      const failed = await listFailedMembers(trx, batch.id);
      if (failed.length === 0) throw conflict(`batch ${batch.id} has no failed member to redrive`);
      return failed;
    }
    case "members":
      return listedMembers(trx, batch.id, target.memberIds);
    case "step":
      return [await memberOfFailedStep(trx, batch.id, target.stepExecutionId)];
    case "init": {
      const init = await getInit(trx, target.initExecutionId);
      if (init === undefined || init.batchId !== batch.id) {
        throw notFound(`batch ${batch.id} has no init execution ${target.initExecutionId}`);
      }
      // A failed init fails the whole batch, and the batch machine has no event from `failed`
      // back to `init_dispatched`; its members never started, so nothing else can be redriven.
      throw conflict(
        `init execution ${init.id} is ${init.status}; redriving init steps is not supported ` +
          "(a batch failed in its init cannot be reopened): create a new batch for its members",
      );
    }
    default: {
      const unreachable: never = target;
      throw new Error(`unknown redrive target ${String(unreachable)}`);
    }
  }
}

/** Each id must be a member of this batch (else not_found naming them) and failed (else conflict naming them). */
async function listedMembers(trx: Db, batchId: number, ids: readonly number[]): Promise<BatchMember[]> {
  const unique = [...new Set(ids)];
  const found = new Map(
    (await getBatchMembersByIds(trx, batchId, unique)).map((member) => [member.id, member]),
  );
  const missing = unique.filter((id) => !found.has(id));
  if (missing.length > 0) throw notFound(`batch ${batchId} has no member ${listOf(missing)}`);
  const problems = ids.flatMap((id, index) => {
    const member = found.get(id)!;
    // A repeated id is reported once, at its first position.
    if (member.status === "failed" || ids.indexOf(id) !== index) return [];
    return [{ path: `memberIds.${index}`, message: `member ${id} is ${member.status}` }];
  });
  if (problems.length > 0) {
    const shown = problems.slice(0, MAX_IDS_IN_MESSAGE).map((problem) => problem.message);
    const more = problems.length > shown.length ? ` and ${problems.length - shown.length} more` : "";
    throw new Refused({
      kind: "conflict",
      message: `only failed members can be redriven: ${shown.join(", ")}${more}; nothing was redriven`,
      problems,
    });
  }
  return unique.map((id) => found.get(id)!);
}

async function memberOfFailedStep(trx: Db, batchId: number, stepId: number): Promise<BatchMember> {
  const step = await getStep(trx, stepId);
  if (step === undefined || step.batchId !== batchId) {
    throw notFound(`batch ${batchId} has no step execution ${stepId}`);
  }
  if (step.status !== "failed" && step.status !== "poll_timeout") {
    throw conflict(
      `step execution ${stepId} is ${step.status}; only a failed or poll_timeout step can be redriven`,
    );
  }
  const member = await getMember(trx, step.batchMemberId);
  if (member === undefined) throw notFound(`batch ${batchId} has no member ${step.batchMemberId}`);
  if (member.status !== "failed") {
    throw conflict(
      `member ${member.id} of step execution ${stepId} is ${member.status}; only a failed member can be redriven`,
    );
  }
  return member;
}

/**
 * Each member's redriven steps in the order the batch runs them: phase by phase (the runbook's
 * sequence), then by step index. Not by id: phases that overlap create their steps in any order.
 */
function describe(
  memberIds: readonly number[],
  steps: readonly StepExecution[],
  phases: readonly PhaseExecution[],
): RedriveResult["redriven"] {
  const sequenceOf = new Map(phases.map((phase) => [phase.id, phase.sequence]));
  const runOrder = (step: StepExecution) => [
    sequenceOf.get(step.phaseExecutionId) ?? 0,
    step.stepIndex,
    step.id,
  ];
  const inRunOrder = [...steps].sort((a, b) => {
    const [left, right] = [runOrder(a), runOrder(b)];
    const differing = left.findIndex((value, index) => value !== right[index]);
    return differing === -1 ? 0 : left[differing]! - right[differing]!;
  });
  const byMember = new Map<number, RedrivenStep[]>(memberIds.map((id) => [id, []]));
  for (const step of inRunOrder) {
    byMember.get(step.batchMemberId)?.push({
      id: step.id,
      phaseExecutionId: step.phaseExecutionId,
      stepName: step.stepName,
      jobId: jobIdFor({ kind: "step", id: step.id }, { ...step, retryCount: 0, pollCount: 0 }),
    });
  }
  return memberIds.map((memberId) => ({ memberId, steps: byMember.get(memberId) ?? [] }));
}

function listOf(ids: readonly number[]): string {
  const shown = ids.slice(0, MAX_IDS_IN_MESSAGE).join(", ");
  return ids.length > MAX_IDS_IN_MESSAGE ? `${shown} and ${ids.length - MAX_IDS_IN_MESSAGE} more` : shown;
}

function notFound(message: string): Refused {
  return new Refused({ kind: "not_found", message });
}

function conflict(message: string): Refused {
  return new Refused({ kind: "conflict", message });
}

import {
  countDispatchedPhaseSteps,
  createPendingSteps,
  getPhase,
  lastMemberWithPhaseSteps,
  getPhaseForUpdate,
  listActiveMembersAfter,
  listMembers,
  markPhaseStepsCreated,
  phaseHasAnySteps,
  transitionPhase,
  type Db,
  type PhaseExecution,
} from "@matoolkit/db";
import { batchMachine, phaseMachine, type PhaseDueMessage } from "@matoolkit/domain";
import { lockBatchInfo, variablesFor, type BatchInfo } from "../batch-info.ts";
import type { HandlerScope } from "../context.ts";
import { notifyPhaseEnded } from "../notifications/notify.ts";
import { prepareExecution } from "../prepare-execution.ts";
import { advanceMembers } from "../progression.ts";

/**
 * Members whose steps are created and started per transaction, by default: the first chunk
 * commits with the phase's dispatch, so jobs flow at once, instead of one transaction that holds
 * every job of a 10,000-member phase until its 50,000th step is written.
 */
export const DEFAULT_PHASE_START_CHUNK = 500;

/**
 * A phase's steps out with workers at once, by default (issue 29): at most 250 jobs of the phase
 * queue up, where a 10,000-member phase started at once queued 10,000 first steps and its last
 * member waited seconds for a worker. Measured at 10,000 × 5 (bench:orchestrator,
 * BENCH_PHASE_START_WINDOW): dispatch → start p99 238–331 ms with 250, 643–724 ms with 500,
 * 7.9–16 s unwindowed; executions/s no lower than unwindowed with either.
 */
export const DEFAULT_PHASE_START_WINDOW = 250;

export class BatchNotReadyError extends Error {}

/**
 * 000 PhaseDueHandler: create the phase's step executions for every active member (idempotent:
 * a unique key on phase/member/index makes a duplicate message create nothing), then start each
 * member on its first pending step. A step whose templates cannot resolve fails when its turn
 * comes (template.unresolved), isolating that member only.
 *
 * Chunked (issue 17): each transaction locks the phase, creates and starts the steps of the next
 * `phaseStartChunk` active members by id, and queues the next chunk for after its commit
 * (`followUps.phaseChunks`); the last one stamps `steps_created_at`. Until then the phase cannot
 * complete (completion.ts) and a member added meanwhile is left to the chunks, which read members
 * by id as they go, so they include it. A crash between chunks leaves the message unacknowledged:
 * its redelivery goes through the chunks again, creating only what is missing and starting only
 * members whose first step is still pending.
 *
 * Windowed (issue 29): the phase's `dispatched` steps never exceed `phaseStartWindow`. The first
 * chunk is at most the window; a later chunk of members who have no steps yet (half the window at
 * most) starts only into the window's room; otherwise the message is done and the
 * phase's results move it on (phase-start-pump.ts: each batch of results nudges its phases, and
 * the reconcile pass nudges any phase still creating its steps). Members that already have steps
 * (a resume or a duplicate going through the chunks again) are started whatever the window.
 *
 * Paused batch (issue 12): acknowledged, nothing created or started, and later chunks stop; the
 * resume sends a phase-due of its own (`phase-due:{id}:resume-{n}`) that goes through the chunks
 * again the same way. That message may also name a completed phase with pending steps (catch-ups
 * created while paused): its active members are started.
 */
export async function handlePhaseDue(scope: HandlerScope, message: PhaseDueMessage): Promise<void> {
  const { trx } = scope;
  const unlocked = await getPhase(trx, message.PhaseExecutionId);
  if (unlocked === undefined) {
    scope.logger.warn(
      { phaseExecutionId: message.PhaseExecutionId },
      "phase-due for a phase that does not exist: ignored",
    );
    return;
  }
  // The batch first (share lock), then the phase: the order a cancel takes them, and what keeps a
  // pause from slipping between the status read and the dispatch (see lockBatchInfos).
  const batch = await lockBatchInfo(trx, unlocked.batchId);
  // Locked (getPhaseForUpdate): a concurrent member-added or duplicate phase-due waits its turn.
  const phase = await getPhaseForUpdate(trx, message.PhaseExecutionId);
  if (phase === undefined) return;
  // completed: a resume restarting a phase with pending steps (catch-ups created while paused,
  // or a retry that fell due meanwhile): only its members' next steps start.
  if (phase.status !== "pending" && phase.status !== "dispatched" && phase.status !== "completed") return;
  // A gated phase is sent only once approved (issue 30): every dispatcher gates it first, so a
  // phase-due naming it while pending is not its approval.
  if (phase.status === "pending" && phase.approvalRequired) {
    scope.logger.warn(
      { phaseExecutionId: phase.id },
      "phase-due for a phase awaiting its approval gate: ignored",
    );
    return;
  }
  // A cancelled batch has cancelled this phase too (under this phase's lock), so only an ended one gets here.
  if (batch === undefined || batchMachine.isTerminal(batch.status)) return;
  if (batch.status === "paused") {
    // Acknowledged, not retried: the resume sends this phase a phase-due of its own (issue 12).
    scope.logger.info({ batchId: batch.id, phaseExecutionId: phase.id }, "phase-due while paused: held");
    return;
  }
  if (batch.status !== "active") {
    // Init has not finished: throwing redelivers the message later (bounded, then dead-lettered).
    throw new BatchNotReadyError(`batch ${batch.id} is ${batch.status}; phases wait for init`);
  }
  if (phase.status === "completed") {
    queueStarts(scope, await activeMemberPairs(scope, batch.id, phase.id));
    return;
  }
  const dispatched =
    phase.status === "pending"
      ? ((await transitionPhase(trx, phase.id, "dispatch", { reason: "phase-due received" })) ?? phase)
      : phase;
  if (dispatched.stepsCreatedAt !== null) {
    // Every step exists (a duplicate phase-due, or a resume): start whoever has not started, after the commit.
    queueStarts(scope, await activeMemberPairs(scope, batch.id, phase.id));
    return;
  }
  await startPhaseChunk(scope, {
    phase: dispatched,
    batch,
    afterMemberId: 0,
    limit: Math.min(scope.phaseStartChunk, scope.phaseStartWindow),
  });
}

/**
 * Where a phase's start stands after continuePhaseStart: a chunk `started`; `waiting` for room in
 * the window (or for the batch to be active again); `finished`, for good: every step created, or
 * the phase or its batch ended, so nothing will ever start here again.
 */
export type PhaseStartProgress = "started" | "waiting" | "finished";

/**
 * A later chunk, in its own transaction: the phase is locked and checked again first. Without
 * `afterMemberId` (a nudge from results), it goes on after the last member with steps.
 */
export async function continuePhaseStart(
  scope: HandlerScope,
  chunk: { phaseExecutionId: number; afterMemberId?: number },
): Promise<PhaseStartProgress> {
  const unlocked = await getPhase(scope.trx, chunk.phaseExecutionId);
  if (unlocked === undefined) return "finished";
  // Batch, then phase (see handlePhaseDue). Paused since the last chunk: stop here; the resume's
  // phase-due goes through the chunks again, creating only what is missing.
  const batch = await lockBatchInfo(scope.trx, unlocked.batchId);
  if (batch === undefined || batchMachine.isTerminal(batch.status)) return "finished";
  if (batch.status !== "active") return "waiting";
  const phase = await getPhaseForUpdate(scope.trx, chunk.phaseExecutionId);
  // Cancelled (or otherwise ended) since the last chunk, or every step created: nothing more to create.
  if (phase === undefined || phase.stepsCreatedAt !== null || phaseMachine.isTerminal(phase.status))
    return "finished";
  if (phase.status !== "dispatched") return "waiting";
  const createdThrough = await lastMemberWithPhaseSteps(scope.trx, phase.id);
  const afterMemberId = chunk.afterMemberId ?? createdThrough;
  if (afterMemberId < createdThrough) {
    // Members with steps already (a resume, a duplicate): started whatever the window, as the
    // pause or the crash left them waiting. The chunk that reaches past the last of them takes
    // new members with it: a resume may overshoot the window once, by one chunk at most.
    await startPhaseChunk(scope, { phase, batch, afterMemberId, limit: scope.phaseStartChunk });
    return "started";
  }
  // New members only into the window's room: the phase's results nudge it on (see handlePhaseDue).
  if (await phaseStartWindowFull(scope.trx, phase.id, scope)) return "waiting";
  await startPhaseChunk(scope, { phase, batch, afterMemberId, limit: windowedChunkSize(scope) });
  return "started";
}

type WindowSettings = Pick<HandlerScope, "phaseStartChunk" | "phaseStartWindow">;

/**
 * Whether the phase's start window has no room for a chunk: more of its steps out with a worker
 * than the window less a chunk. One statement, no lock: the phase-start pump asks it before
 * opening continuePhaseStart's transaction, as most nudges (one per result transaction) find the
 * window full. Room only grows when a transaction commits, and each commit nudges again after
 * it, so an answer read a moment early is corrected by the next nudge.
 */
export async function phaseStartWindowFull(
  db: Db,
  phaseExecutionId: number,
  settings: WindowSettings,
): Promise<boolean> {
  const window = settings.phaseStartWindow;
  const room = window - windowedChunkSize(settings);
  return (await countDispatchedPhaseSteps(db, phaseExecutionId, window)) > room;
}

/**
 * Members per chunk within the window: half the window at most, so a chunk starts once half the
 * window has come back, and the window never holds more than `phaseStartWindow` steps.
 */
function windowedChunkSize(settings: WindowSettings): number {
  return Math.max(1, Math.min(settings.phaseStartChunk, Math.ceil(settings.phaseStartWindow / 2)));
}

async function startPhaseChunk(
  scope: HandlerScope,
  args: { phase: PhaseExecution; batch: BatchInfo; afterMemberId: number; limit: number },
): Promise<void> {
  const { trx } = scope;
  const { phase, batch } = args;
  const runbook = await scope.runbooks.get(trx, batch.runbookName, phase.runbookVersion);
  const definition = runbook.phases.find((candidate) => candidate.name === phase.phaseName);
  if (definition === undefined)
    throw new Error(`phase ${phase.phaseName} is not in runbook version ${phase.runbookVersion}`);
  const members = await listActiveMembersAfter(trx, batch.id, args.afterMemberId, args.limit);
  if (members.length === 0 && args.afterMemberId === 0 && !(await phaseHasAnySteps(trx, phase.id))) {
    // Nobody to run: close the phase here, since completion checks wait for steps to exist.
    const noOne = { succeededMembers: 0, failedMembers: 0 };
    const failed = await transitionPhase(trx, phase.id, "fail", {
      reason: "no active member",
      set: { outcome: "failed", ...noOne },
    });
    if (failed !== undefined) {
      await notifyPhaseEnded(trx, {
        phase: { ...failed, status: "failed" },
        batchId: batch.id,
        outcome: "failed",
        counts: noOne,
        at: scope.now(),
      });
    }
    await markPhaseStepsCreated(trx, phase.id, scope.now());
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
  await advanceMembers(
    scope,
    members.map((member) => ({ memberId: member.id, phaseExecutionId: phase.id })),
    { phases: new Map([[phase.id, phase]]), batches: new Map([[batch.id, batch]]) },
  );
  if (members.length === args.limit) {
    scope.followUps.phaseChunks.push({ phaseExecutionId: phase.id, afterMemberId: members.at(-1)!.id });
  } else {
    await markPhaseStepsCreated(trx, phase.id, scope.now());
  }
  scope.followUps.phaseIds.add(phase.id);
}

async function activeMemberPairs(
  scope: HandlerScope,
  batchId: number,
  phaseExecutionId: number,
): Promise<{ memberId: number; phaseExecutionId: number }[]> {
  const members = (await listMembers(scope.trx, batchId)).filter((member) => member.status === "active");
  return members.map((member) => ({ memberId: member.id, phaseExecutionId }));
}

function queueStarts(
  scope: HandlerScope,
  pairs: readonly { memberId: number; phaseExecutionId: number }[],
): void {
  for (let offset = 0; offset < pairs.length; offset += scope.phaseStartChunk) {
    scope.followUps.memberStarts.push(pairs.slice(offset, offset + scope.phaseStartChunk));
  }
}

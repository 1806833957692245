import {
  getMember,
  getPhase,
  listInitsByBatch,
  listStepsByMember,
  transitionBatch,
  type Db,
} from "@matoolkit/db";
import type { BatchInfo } from "./batch-info.ts";
import { variablesFor } from "./batch-info.ts";
import type { FollowUps, OrchestratorContext } from "./context.ts";
import { dispatchExecution, nextDispatchable } from "./dispatch.ts";
import { handleTerminalFailure } from "./failure.ts";

/**
 * Per-member progression (000 PhaseProgressionService.CheckMemberProgressionAsync): walk the
 * member's steps of one phase in step_index order and dispatch the next pending one. Members
 * progress independently; a member that is no longer active gets nothing.
 */
export async function advanceMember(
  trx: Db,
  ctx: OrchestratorContext,
  args: { batch: BatchInfo; phaseExecutionId: number; memberId: number; followUps: FollowUps },
): Promise<void> {
  const member = await getMember(trx, args.memberId);
  if (member === undefined || member.status !== "active") return;
  const phase = await getPhase(trx, args.phaseExecutionId);
  // A completed phase still progresses: a member that joined after it completed gets catch-up
  // steps in it (000 "Member Catch-Up Protocol": phases "dispatched or completed"), and they
  // must be dispatched, not left pending forever. Other phase states never have runnable steps.
  if (phase === undefined || (phase.status !== "dispatched" && phase.status !== "completed")) return;
  const steps = (await listStepsByMember(trx, args.memberId)).filter(
    (step) => step.phaseExecutionId === args.phaseExecutionId,
  );
  const next = nextDispatchable(steps);
  args.followUps.phaseIds.add(args.phaseExecutionId);
  if (next === undefined) return;
  const outcome = await dispatchExecution(trx, ctx, {
    ref: { kind: "step", id: next.id },
    row: { ...next, runbookVersion: null },
    batch: args.batch,
    runbookVersion: phase.runbookVersion,
    variables: variablesFor(args.batch, member),
  });
  if (outcome.kind === "failed") {
    await handleTerminalFailure(trx, ctx, {
      ref: { kind: "step", id: next.id },
      row: outcome.row,
      batch: args.batch,
      followUps: args.followUps,
    });
  }
}

/**
 * Init steps run one at a time for the whole batch (000 "Execution Model"); when the last one
 * has succeeded the batch becomes active.
 */
export async function advanceInit(
  trx: Db,
  ctx: OrchestratorContext,
  args: { batch: BatchInfo; runbookVersion: number; followUps: FollowUps },
): Promise<void> {
  const inits = await listInitsByBatch(trx, args.batch.id, args.runbookVersion);
  if (inits.length > 0 && inits.every((init) => init.status === "succeeded")) {
    await transitionBatch(trx, args.batch.id, "activate", { reason: "init complete" });
    return;
  }
  const next = nextDispatchable(inits);
  if (next === undefined) return;
  const outcome = await dispatchExecution(trx, ctx, {
    ref: { kind: "init", id: next.id },
    row: { ...next, phaseExecutionId: null, batchMemberId: null },
    batch: args.batch,
    runbookVersion: args.runbookVersion,
    variables: variablesFor(args.batch),
  });
  if (outcome.kind === "failed") {
    await handleTerminalFailure(trx, ctx, {
      ref: { kind: "init", id: next.id },
      row: outcome.row,
      batch: args.batch,
      followUps: args.followUps,
    });
  }
}

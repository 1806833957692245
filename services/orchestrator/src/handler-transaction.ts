import { runFollowUps } from "./completion.ts";
import { continuePhaseStart } from "./handlers/phase-due.ts";
import { advanceMembers } from "./progression.ts";
import type { Db } from "@matoolkit/db";
import { emptyFollowUps, type FollowUps, type HandlerScope, type OrchestratorContext } from "./context.ts";
import { phasesToNudge } from "./follow-up-phases.ts";

/**
 * One transaction for `work`, then the completion checks it asked for, after the commit; last,
 * the phases where it may have made room in the start window are nudged (phase-start-pump.ts): a
 * result, a cancel or a retry may have; a member moving on to its next step has not
 * (follow-up-phases.ts).
 */
export async function inHandlerTransaction<T>(
  ctx: OrchestratorContext,
  work: (scope: HandlerScope) => Promise<T>,
): Promise<T> {
  const touchedPhases = new Set<number>();
  const result = await inTransactionThenFollowUps(ctx, work, touchedPhases);
  for (const phaseId of touchedPhases) ctx.phaseStarts?.nudge(phaseId);
  return result;
}

/** What a handler gets in `trx`: the service's tools, and `followUps` to collect what runs after it. */
export function handlerScope(ctx: OrchestratorContext, trx: Db, followUps: FollowUps): HandlerScope {
  return {
    trx,
    logger: ctx.logger,
    runbooks: ctx.runbooks,
    now: ctx.now,
    phaseStartChunk: ctx.phaseStartChunk,
    phaseStartWindow: ctx.phaseStartWindow,
    followUps,
    ...(ctx.publishInTransaction === undefined ? {} : { publishInTransaction: ctx.publishInTransaction }),
  };
}

async function inTransactionThenFollowUps<T>(
  ctx: OrchestratorContext,
  work: (scope: HandlerScope) => Promise<T>,
  touchedPhases: Set<number>,
): Promise<T> {
  const followUps = emptyFollowUps();
  const result = await ctx.db.transaction().execute((trx) => work(handlerScope(ctx, trx, followUps)));
  for (const phaseId of phasesToNudge(followUps)) touchedPhases.add(phaseId);
  // Chunked starts first: the completion checks below must see the steps they dispatch.
  for (const chunk of followUps.memberStarts) {
    await inTransactionThenFollowUps(ctx, (scope) => advanceMembers(scope, chunk), touchedPhases);
  }
  // Each chunk queues the next one in its own follow-ups, so this runs them all, in order, until
  // the last or until the phase's start window is full (continuePhaseStart).
  for (const chunk of followUps.phaseChunks) {
    await inTransactionThenFollowUps(ctx, (scope) => continuePhaseStart(scope, chunk), touchedPhases);
  }
  await runFollowUps(ctx, followUps);
  return result;
}

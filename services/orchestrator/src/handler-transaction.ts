import { runFollowUps } from "./completion.ts";
import { continuePhaseStart } from "./handlers/phase-due.ts";
import { advanceMembers } from "./progression.ts";
import { emptyFollowUps, type HandlerScope, type OrchestratorContext } from "./context.ts";

/** One transaction for `work`, then the completion checks it asked for, after the commit. */
export async function inHandlerTransaction<T>(
  ctx: OrchestratorContext,
  work: (scope: HandlerScope) => Promise<T>,
): Promise<T> {
  const followUps = emptyFollowUps();
  const result = await ctx.db.transaction().execute((trx) =>
    work({
      trx,
      logger: ctx.logger,
      runbooks: ctx.runbooks,
      now: ctx.now,
      phaseStartChunk: ctx.phaseStartChunk,
      followUps,
      ...(ctx.publishInTransaction === undefined ? {} : { publishInTransaction: ctx.publishInTransaction }),
    }),
  );
  // Chunked starts first: the completion checks below must see the steps they dispatch.
  for (const chunk of followUps.memberStarts) {
    await inHandlerTransaction(ctx, (scope) => advanceMembers(scope, chunk));
  }
  // Each chunk queues the next one in its own follow-ups, so this runs them all, in order.
  for (const chunk of followUps.phaseChunks) {
    await inHandlerTransaction(ctx, (scope) => continuePhaseStart(scope, chunk));
  }
  await runFollowUps(ctx, followUps);
  return result;
}

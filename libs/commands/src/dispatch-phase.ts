import { enqueueOutbox, setCurrentPhase, transitionPhase, type Db, type PhaseExecution } from "@matoolkit/db";
import { phaseDueMessage } from "./messages.ts";

/**
 * pending → dispatched and the `phase-due` message, in the caller's transaction (outbox). Used by
 * the admin API (manual advance), the batch workflow (a phase fell due) and the scheduler. The
 * transition is guarded, so only one of them ever dispatches a phase; returns whether we did.
 */
export async function dispatchPhase(
  trx: Db,
  args: {
    batchId: number;
    runbookName: string;
    phase: PhaseExecution;
    reason: string;
    /** The operator advancing a manual batch (events.actor); omitted for the system's own dispatch. */
    actor?: string;
  },
): Promise<boolean> {
  const { phase } = args;
  const won = await transitionPhase(trx, phase.id, "dispatch", { reason: args.reason, actor: args.actor });
  if (won === undefined) return false;
  await setCurrentPhase(trx, args.batchId, phase.phaseName);
  await enqueueOutbox(trx, [
    phaseDueMessage({
      BatchId: args.batchId,
      RunbookName: args.runbookName,
      RunbookVersion: phase.runbookVersion,
      PhaseName: phase.phaseName,
      PhaseExecutionId: phase.id,
    }),
  ]);
  return true;
}

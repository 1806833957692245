import {
  countBatchResumes,
  enqueueOutbox,
  getBatchWithRunbook,
  listInitsByBatch,
  listPhasesToRestart,
  listPollingInitsOfBatch,
  listPollingStepsOfBatch,
  listRetryWaitingSteps,
  transitionBatch,
  type Batch,
  type Db,
  type InitExecution,
  type StepExecution,
} from "@matoolkit/db";
import { phaseResumeEnvelope, resumeCheckEnvelope, type MessageEnvelope } from "@matoolkit/domain";
import { notifyBatchChanged } from "./notify-batch-changed.ts";

export interface ResumedBatch {
  readonly batch: Batch;
  /** What the resume sent again: phase restarts, poll-checks, retry-checks. */
  readonly sent: { readonly phases: number; readonly pollChecks: number; readonly retryChecks: number };
}

/**
 * paused → active (issue 12), in the caller's transaction, with everything the pause held back
 * queued in the same transaction (outbox), each message with an id unique to this resume (the
 * originals were delivered while paused and did nothing; the bus would drop a same-id copy):
 *
 * - a phase-due for every dispatched phase, and every completed phase with a pending step: it
 *   creates the steps a chunked start had not created yet and starts every active member whose
 *   next step is pending (except a retry not due yet);
 * - a poll-check for every polling step and init, at its next poll time (the handler's interval
 *   guard would swallow an early one);
 * - a retry-check for every pending step whose retry is not due yet, at retry_after, so the
 *   pause never shortens a retry interval; and one for the next pending init (a version
 *   transition's rerun init that arrived while paused);
 * - the batch-changed nudge: the workflow resumes and dispatches the phases that fell due.
 *
 * Phase and batch timers (due_at) need nothing here: the workflow reads them from SQL.
 * Undefined when the batch is not paused (the guarded transition lost): nothing is written then.
 */
export async function resumeBatch(
  trx: Db,
  batchId: number,
  options: { readonly actor?: string; readonly now?: Date } = {},
): Promise<ResumedBatch | undefined> {
  const resumed = await transitionBatch(trx, batchId, "resume", {
    reason: "resumed by operator",
    actor: options.actor,
  });
  if (resumed === undefined) return undefined;
  const batch = await getBatchWithRunbook(trx, batchId);
  if (batch === undefined) return undefined;
  const now = options.now ?? new Date();
  // This resume included: 1 for the first, so every resume's messages have ids of their own.
  const resume = await countBatchResumes(trx, batchId);

  const phases = (await listPhasesToRestart(trx, batchId)).map((phase) =>
    phaseResumeEnvelope(
      {
        BatchId: batchId,
        RunbookName: batch.runbookName,
        RunbookVersion: phase.runbookVersion,
        PhaseName: phase.phaseName,
        PhaseExecutionId: phase.id,
      },
      resume,
    ),
  );
  const polling = [
    ...(await listPollingStepsOfBatch(trx, batchId)).map((row) => ({ kind: "step" as const, row })),
    ...(await listPollingInitsOfBatch(trx, batchId)).map((row) => ({ kind: "init" as const, row })),
  ];
  const pollChecks = polling.map(({ kind, row }) =>
    resumeCheckEnvelope(
      "poll-check",
      { kind, id: row.id },
      { attempt: row.pollCount + 1, resume, at: nextPollAt(row, now), redriveCount: row.redriveCount },
    ),
  );
  const retrySteps = (await listRetryWaitingSteps(trx, batchId, now)).map((row) =>
    retryCheck("step", row, resume, now),
  );
  const nextInit = nextPendingInit(await listInitsByBatch(trx, batchId, batch.runbookVersion));
  const retryChecks = [
    ...retrySteps,
    ...(nextInit === undefined ? [] : [retryCheck("init", nextInit, resume, now)]),
  ];

  const messages: MessageEnvelope[] = [...phases, ...pollChecks, ...retryChecks];
  if (messages.length > 0) await enqueueOutbox(trx, messages);
  await notifyBatchChanged(trx, batchId, "resumed");
  return {
    batch: resumed,
    sent: { phases: phases.length, pollChecks: pollChecks.length, retryChecks: retryChecks.length },
  };
}

/** When the poll-check handler will poll again: the last poll plus the interval, not before now. */
function nextPollAt(row: StepExecution | InitExecution, now: Date): Date {
  const last = row.lastPolledAt ?? row.pollStartedAt ?? now;
  const due = last.getTime() + (row.pollIntervalSec ?? 0) * 1000;
  return new Date(Math.max(due, now.getTime()));
}

function retryCheck(
  kind: "step" | "init",
  row: StepExecution | InitExecution,
  resume: number,
  now: Date,
): MessageEnvelope {
  const due = Math.max(row.retryAfter?.getTime() ?? now.getTime(), now.getTime());
  return resumeCheckEnvelope(
    "retry-check",
    { kind, id: row.id },
    { attempt: row.retryCount, resume, at: new Date(due), redriveCount: row.redriveCount },
  );
}

/** The init chain's next step when it is pending (inits run one at a time, in step order). */
function nextPendingInit(inits: readonly InitExecution[]): InitExecution | undefined {
  const next = [...inits]
    .sort((a, b) => a.stepIndex - b.stepIndex)
    .find((init) => init.status !== "succeeded");
  return next?.status === "pending" ? next : undefined;
}

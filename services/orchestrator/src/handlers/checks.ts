import { getMember, getPhase, type Db } from "@matoolkit/db";
import type { PollCheckMessage, RetryCheckMessage } from "@matoolkit/domain";
import { lockBatchInfo, variablesFor } from "../batch-info.ts";
import type { HandlerScope } from "../context.ts";
import { dispatchExecution } from "../dispatch.ts";
import {
  jobIdFor,
  loadExecution,
  type ExecutionRow,
  lockExecution,
  recordExecutionPollDispatch,
  refFromCorrelation,
  transitionExecution,
} from "../executions.ts";
import { handleTerminalFailure } from "../failure.ts";
import { sendWorkerJob } from "../outgoing.ts";
import { acceptsDispatch } from "../progression.ts";

const POLL_CLOCK_TOLERANCE_MS = 1000;

/**
 * 000 "Polling Protocol" step 6: past poll_started_at + poll_timeout_sec → poll_timeout, handled
 * as a failure (rollback, member failure) and never retried; otherwise re-dispatch the same
 * function with a new job id and poll_count + 1. The step stays `polling` meanwhile.
 */
export async function handlePollCheck(scope: HandlerScope, message: PollCheckMessage): Promise<void> {
  const { trx } = scope;
  const ref = refFromCorrelation(message.IsInitStep, message.StepExecutionId);
  const unlocked = await loadExecution(trx, ref);
  if (unlocked === undefined || unlocked.status !== "polling") return;
  // The batch first (share lock), then the execution: the order a cancel takes them. A paused
  // batch neither polls nor times out: the resume sends this check again (issue 12).
  const batch = await lockBatchInfo(trx, unlocked.batchId);
  if (batch === undefined || !acceptsDispatch(batch)) return;
  // Locked: the interval guard below reads last_polled_at, which no status guard protects. Two
  // checks for the same attempt at once (sweep and timer beyond the dedupe window) would both
  // pass it and count the poll twice; locked, the second waits and sees the first's poll.
  const row = await lockExecution(trx, ref);
  if (row === undefined || row.status !== "polling") return;
  if (row.phaseExecutionId !== null) scope.followUps.phaseIds.add(row.phaseExecutionId);
  const now = scope.now();
  const verdict = pollCheckVerdict(row, now);
  if (verdict === "not-yet") return;
  if (verdict === "timed-out") {
    const timedOut = await transitionExecution(trx, ref, "time_out_polling", {
      reason: "poll.timeout",
      set: {
        errorCode: "poll.timeout",
        errorMessage: `no completion within ${row.pollTimeoutSec ?? 0}s of polling`,
        completedAt: now,
      },
    });
    if (timedOut !== undefined) await handleTerminalFailure(scope, { ref, row: timedOut, batch });
    return;
  }
  const jobId = jobIdFor(ref, { ...row, pollCount: row.pollCount + 1 });
  const polled = await recordExecutionPollDispatch(trx, ref, { jobId, lastPolledAt: now });
  if (polled === undefined) return;
  const runbookVersion = await runbookVersionOf(trx, row);
  await sendWorkerJob(scope, {
    ref,
    row: polled,
    jobId,
    batchId: batch.id,
    runbook: { runbookName: batch.runbookName, runbookVersion },
  });
}

type PollTimes = Pick<ExecutionRow, "lastPolledAt" | "pollStartedAt" | "pollIntervalSec" | "pollTimeoutSec">;

/**
 * What a poll check does with a step still `polling` at `now`: nothing yet (its interval has
 * not elapsed: a second check for the same attempt, the scheduler's sweep after the
 * orchestrator's own timer beyond the dedupe window, finds it polled moments ago), poll again,
 * or fail it (past poll_started_at + poll_timeout_sec).
 */
export function pollCheckVerdict(row: PollTimes, now: Date): "not-yet" | "poll" | "timed-out" {
  const lastPolledAt = row.lastPolledAt ?? row.pollStartedAt ?? now;
  // The tolerance is at most half the interval: with a 1 s interval a full second of tolerance let
  // every check through, and the same check delivered twice at once polled twice, whichever of
  // the two clocks read first (the duplicate-delivery e2e test, once deliveries got faster).
  const intervalMs = (row.pollIntervalSec ?? 0) * 1000;
  const toleranceMs = Math.min(POLL_CLOCK_TOLERANCE_MS, intervalMs / 2);
  if (lastPolledAt.getTime() + intervalMs > now.getTime() + toleranceMs) return "not-yet";
  const startedAt = row.pollStartedAt ?? now;
  if (startedAt.getTime() + (row.pollTimeoutSec ?? 0) * 1000 < now.getTime()) return "timed-out";
  return "poll";
}

/**
 * 000 "Retry Protocol" step 3: dispatch only a step that is still `pending` (it may have been
 * cancelled since the retry was scheduled), and only for a member that is still active.
 */
export async function handleRetryCheck(scope: HandlerScope, message: RetryCheckMessage): Promise<void> {
  const { trx } = scope;
  const ref = refFromCorrelation(message.IsInitStep, message.StepExecutionId);
  const row = await loadExecution(trx, ref);
  if (row === undefined || row.status !== "pending") return;
  // Share-locked before the dispatch locks the execution. Paused: nothing now; the resume sends
  // this check again for the retry's due time (issue 12).
  const batch = await lockBatchInfo(trx, row.batchId);
  if (batch === undefined || !acceptsDispatch(batch)) return;
  const member = row.batchMemberId === null ? undefined : await getMember(trx, row.batchMemberId);
  if (ref.kind === "step" && member?.status !== "active") return;
  const outcome = await dispatchExecution(scope, {
    ref,
    row,
    batch,
    runbookVersion: await runbookVersionOf(trx, row),
    variables: variablesFor(batch, member),
  });
  if (outcome.kind === "failed") await handleTerminalFailure(scope, { ref, row: outcome.row, batch });
}

async function runbookVersionOf(
  db: Db,
  row: { runbookVersion: number | null; phaseExecutionId: number | null },
): Promise<number> {
  if (row.runbookVersion !== null) return row.runbookVersion;
  const phase = row.phaseExecutionId === null ? undefined : await getPhase(db, row.phaseExecutionId);
  if (phase === undefined) throw new Error("execution has neither a runbook version nor a phase");
  return phase.runbookVersion;
}

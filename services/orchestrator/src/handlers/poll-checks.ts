import { getPhasesByIds, lockPollingSteps, recordPollDispatches, type StepExecution } from "@matoolkit/db";
import type { PollCheckMessage } from "@matoolkit/domain";
import type { BatchInfo } from "../batch-info.ts";
import type { HandlerScope } from "../context.ts";
import { jobIdFor } from "../executions.ts";
import { sendWorkerJobs } from "../outgoing.ts";
import { acceptsDispatch } from "../progression.ts";
import { handlePollCheck, pollCheckVerdict } from "./checks.ts";

/**
 * 000 "Polling Protocol" step 6 for a batch of poll checks, set-based: what handlePollCheck
 * decides for one step — poll again only a step still `polling`, of a batch that accepts
 * dispatch, whose interval has elapsed; past its poll timeout it fails instead — decided for all
 * of them from one locked read of their steps, then ONE poll re-dispatch (new job id, one more
 * poll), one read of their phases and ONE publish of their jobs. `batches` are the checks'
 * batches, share-locked by the caller before any execution row (the pause order). Timeouts, rare,
 * and init checks go one by one through handlePollCheck.
 */
export async function handlePollChecks(
  scope: HandlerScope,
  checks: readonly PollCheckMessage[],
  batches: ReadonlyMap<number, BatchInfo>,
): Promise<void> {
  for (const check of checks) if (check.IsInitStep) await handlePollCheck(scope, check);
  const stepIds = checks.filter((check) => !check.IsInitStep).map((check) => check.StepExecutionId);
  // Locked: the interval guard reads last_polled_at (see handlePollCheck).
  const steps = await lockPollingSteps(scope.trx, stepIds);
  const now = scope.now();
  const due: StepExecution[] = [];
  const timedOut: PollCheckMessage[] = [];
  for (const step of steps) {
    const batch = batches.get(step.batchId);
    // A paused batch neither polls nor times out: the resume sends this check again (issue 12).
    if (batch === undefined || !acceptsDispatch(batch)) continue;
    scope.followUps.phaseIds.add(step.phaseExecutionId);
    const verdict = pollCheckVerdict(step, now);
    if (verdict === "poll") due.push(step);
    else if (verdict === "timed-out") timedOut.push({ StepExecutionId: step.id, IsInitStep: false });
  }
  const polled = await recordPollDispatches(
    scope.trx,
    due.map((step) => ({
      id: step.id,
      jobId: jobIdFor({ kind: "step", id: step.id }, { ...step, pollCount: step.pollCount + 1 }),
      lastPolledAt: now,
    })),
  );
  const phases = new Map(
    (
      await getPhasesByIds(
        scope.trx,
        polled.map((step) => step.phaseExecutionId),
      )
    ).map((phase) => [phase.id, phase]),
  );
  await sendWorkerJobs(
    scope,
    polled.map((step) => {
      const batch = batches.get(step.batchId)!;
      const phase = phases.get(step.phaseExecutionId);
      if (phase === undefined) throw new Error("execution has neither a runbook version nor a phase");
      return {
        ref: { kind: "step", id: step.id },
        row: step,
        jobId: step.jobId!,
        batchId: batch.id,
        runbook: { runbookName: batch.runbookName, runbookVersion: phase.runbookVersion },
      };
    }),
  );
  // Timeouts as alone: the transition, then the rollback and the member's failure.
  for (const check of timedOut) await handlePollCheck(scope, check);
}

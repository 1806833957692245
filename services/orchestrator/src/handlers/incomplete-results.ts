import { getStepsByIds, startPollingSteps, type StepExecution } from "@matoolkit/db";
import { executionMachine, type ExecutionStatus, type WorkerResultMessage } from "@matoolkit/domain";
import type { HandlerScope } from "../context.ts";
import { sendSelfChecks, type SelfCheck } from "../outgoing.ts";
import { handleWorkerResult } from "./worker-result.ts";

/**
 * 000 "Polling Protocol" step 4 for a batch of member steps whose worker answered
 * `{complete: false}`, set-based: one read of the steps, ONE guarded `start_polling` for those
 * still `dispatched` (the first answer of an attempt), and ONE publish of the poll checks, each
 * due one poll interval from now. What one by one ignores is ignored here too: a result whose job
 * is not the step's current one, or for a step already ended. A step with no poll configuration
 * goes one by one to its failure (worker-result.ts). Returns whether any did.
 */
export async function handleIncompleteStepResults(
  scope: HandlerScope,
  results: readonly WorkerResultMessage[],
): Promise<boolean> {
  if (results.length === 0) return false;
  const { trx } = scope;
  const steps = new Map(
    (
      await getStepsByIds(
        trx,
        results.map((result) => result.CorrelationData.StepExecutionId),
      )
    ).map((step) => [step.id, step]),
  );
  const current = new Map<number, StepExecution>();
  let oneByOne = false;
  for (const result of results) {
    const step = steps.get(result.CorrelationData.StepExecutionId);
    if (step === undefined) continue;
    scope.followUps.phaseIds.add(step.phaseExecutionId);
    if (step.jobId !== result.JobId || executionMachine.isTerminal(step.status as ExecutionStatus)) continue;
    if (!step.isPollStep || step.pollIntervalSec === null) {
      await handleWorkerResult(scope, result);
      oneByOne = true;
    } else current.set(step.id, step);
  }
  const now = scope.now();
  const dispatched = [...current.values()].filter((step) => step.status === "dispatched");
  const started = new Set(
    (
      await startPollingSteps(
        trx,
        dispatched.map((step) => ({ id: step.id, jobId: step.jobId!, at: now })),
      )
    ).map((step) => step.id),
  );
  const checks: SelfCheck[] = [];
  for (const step of current.values()) {
    // A dispatched step another delivery moved first (or ended) polls no more from here.
    if (step.status === "dispatched" && !started.has(step.id)) continue;
    checks.push({
      type: "poll-check",
      ref: { kind: "step", id: step.id },
      at: new Date(now.getTime() + step.pollIntervalSec! * 1000),
      attempt: step.pollCount + 1,
      redriveCount: step.redriveCount,
    });
  }
  await sendSelfChecks(scope, checks);
  return oneByOne;
}

import {
  getPhasesByIds,
  mergeWorkerData,
  phaseIdsOfSteps,
  succeedSteps,
  type PhaseExecution,
  type StepExecution,
} from "@matoolkit/db";
import type { WorkerResultMessage } from "@matoolkit/domain";
import {
  loadBatchInfos,
  lockBatchInfosOfExecutions,
  lockBatchInfosWithPhasesOfSteps,
} from "../batch-info.ts";
import type { HandlerScope } from "../context.ts";
import { outputsOf } from "../outputs.ts";
import { advanceMembers, type KnownRows } from "../progression.ts";
import { completeMap } from "../complete-map.ts";
import { refFromCorrelation } from "../executions.ts";
import { handleFailedStepResults } from "./failed-results.ts";
import { handleIncompleteStepResults } from "./incomplete-results.ts";
import { handleWorkerResult, isIncomplete } from "./worker-result.ts";
import { countByPhase } from "../follow-up-phases.ts";

/**
 * 000 ResultProcessor for a batch of results in ONE transaction. The common case, a member step
 * that completed, is set-based: one guarded transition moves every such step whose job is still
 * the current one to `succeeded` (stale and duplicate results move nothing, as one by one), the
 * outputs are merged, and the members' next steps are dispatched together (advanceMembers).
 * Failed member steps (failed-results.ts: fail, retry, their checks) and `{complete: false}`
 * answers (incomplete-results.ts: start polling, the poll checks) are set-based too. Init steps,
 * rare and with their own progression, go one by one, in the same transaction.
 */
export async function handleWorkerResults(
  scope: HandlerScope,
  results: readonly WorkerResultMessage[],
): Promise<void> {
  // First, in ONE statement, the batches of every result, locked FOR SHARE until the commit and
  // before any execution row is locked (the order a batch cancel takes): a pause either waits for
  // this transaction or has committed, and then nothing below sends a next step (acceptsDispatch).
  // Member steps only (the common case): their phases come with the same statement.
  const refs = results.map((result) =>
    refFromCorrelation(result.CorrelationData.IsInitStep, result.CorrelationData.StepExecutionId),
  );
  const readFirst = refs.some((ref) => ref.kind === "init")
    ? {
        batches: await lockBatchInfosOfExecutions(scope.trx, refs),
        phases: new Map<number, PhaseExecution>(),
      }
    : await lockBatchInfosWithPhasesOfSteps(
        scope.trx,
        refs.map((ref) => ref.id),
      );
  const completedSteps: WorkerResultMessage[] = [];
  const failedSteps: WorkerResultMessage[] = [];
  const incompleteSteps: WorkerResultMessage[] = [];
  let oneByOne = false;
  for (const result of results) {
    if (result.CorrelationData.IsInitStep) {
      await handleWorkerResult(scope, result);
      oneByOne = true;
    } else if (result.Status === "Failure") failedSteps.push(result);
    else if (isIncomplete(result.Result)) incompleteSteps.push(result);
    else completedSteps.push(result);
  }
  if (await handleFailedStepResults(scope, failedSteps, readFirst.batches)) oneByOne = true;
  if (await handleIncompleteStepResults(scope, incompleteSteps)) oneByOne = true;
  // A result handled one by one may have moved its batch (an init failure fails it): read again.
  if (completedSteps.length > 0)
    await succeedCompletedSteps(scope, completedSteps, oneByOne ? {} : readFirst);
}

async function succeedCompletedSteps(
  scope: HandlerScope,
  results: readonly WorkerResultMessage[],
  /** What the results' first statement read: their batches (locked) and, for member steps, phases. */
  readFirst: KnownRows,
): Promise<void> {
  const { trx } = scope;
  const now = scope.now();
  const succeeded = await succeedSteps(
    trx,
    results.map((result) => ({
      id: result.CorrelationData.StepExecutionId,
      jobId: result.JobId,
      result: result.Result ?? null,
      completedAt: now,
    })),
  );
  const moved = new Set(succeeded.map((step) => step.id));
  const ignored = results.filter((result) => !moved.has(result.CorrelationData.StepExecutionId));
  if (ignored.length > 0) {
    // A stale or duplicate result changes nothing, but its phase is checked again after commit,
    // as one by one (a duplicate may be the redelivery of a result whose checks never ran).
    scope.logger.debug({ results: ignored.length }, "stale or duplicate results: ignored");
    const phaseIds = await phaseIdsOfSteps(
      trx,
      ignored.map((result) => result.CorrelationData.StepExecutionId),
    );
    for (const phaseId of phaseIds) scope.followUps.phaseIds.add(phaseId);
  }
  if (succeeded.length === 0) return;

  const phases = await completeMap(
    readFirst.phases,
    succeeded.map((step) => step.phaseExecutionId),
    async (ids) => new Map((await getPhasesByIds(trx, ids)).map((p) => [p.id, p])),
  );
  // Locked FOR SHARE by the first statement, so a status read now still holds until the commit.
  const batches = await completeMap(
    readFirst.batches,
    [...phases.values()].map((phase) => phase.batchId),
    (ids) => loadBatchInfos(trx, ids),
  );
  // Counted, not added to phaseIds: a phase whose members all moved on to their next step is
  // neither checked nor nudged (follow-up-phases.ts).
  for (const step of succeeded) countByPhase(scope.followUps.succeededByPhase, step.phaseExecutionId);
  await mergeOutputs(scope, succeeded, { phases, batches });
  await advanceMembers(
    scope,
    succeeded.map((step) => ({ memberId: step.batchMemberId, phaseExecutionId: step.phaseExecutionId })),
    { phases, batches },
  );
}

/** 000 "Worker Output Variables", before the next steps resolve their templates against them. */
async function mergeOutputs(
  scope: HandlerScope,
  steps: readonly StepExecution[],
  known: Required<KnownRows>,
): Promise<void> {
  for (const step of steps) {
    const phase = known.phases.get(step.phaseExecutionId);
    const batch = phase === undefined ? undefined : known.batches.get(phase.batchId);
    if (phase === undefined || batch === undefined) continue;
    const runbook = await scope.runbooks.get(scope.trx, batch.runbookName, phase.runbookVersion);
    const outputs = outputsOf(step, phase, runbook);
    if (Object.keys(outputs).length > 0) await mergeWorkerData(scope.trx, step.batchMemberId, outputs);
  }
}

import { enqueueOutbox, type Db } from "@matoolkit/db";
import {
  selfCheckEnvelope,
  workerJobEnvelope,
  type CorrelationData,
  type OrchestratorEventType,
  type WorkerJobMessage,
} from "@matoolkit/domain";
import type { ExecutionRef, ExecutionRow } from "./executions.ts";

/**
 * Everything the orchestrator sends goes through the transactional outbox, in the same
 * transaction as the status change that caused it: a committed `dispatched` always has its job
 * on the way, and a rolled-back one never sends a job (no lost step, no phantom job). Message
 * ids come from the envelopes (libs/domain), the one place that derives them.
 */
export interface RunbookVersionRef {
  readonly runbookName: string;
  readonly runbookVersion: number;
}

export interface TrackedJob {
  readonly ref: ExecutionRef;
  readonly row: Pick<ExecutionRow, "workerId" | "functionName" | "paramsJson">;
  readonly jobId: string;
  readonly batchId: number;
  readonly runbook: RunbookVersionRef;
}

/** The worker jobs of dispatched executions, in one outbox statement. */
export async function sendWorkerJobs(db: Db, jobs: readonly TrackedJob[]): Promise<void> {
  if (jobs.length === 0) return;
  await enqueueOutbox(db, jobs.map(trackedJobEnvelope));
}

export function sendWorkerJob(db: Db, job: TrackedJob): Promise<void> {
  return sendWorkerJobs(db, [job]);
}

function trackedJobEnvelope(job: TrackedJob) {
  const correlation: CorrelationData = {
    StepExecutionId: job.ref.id,
    IsInitStep: job.ref.kind === "init",
    RunbookName: job.runbook.runbookName,
    RunbookVersion: job.runbook.runbookVersion,
  };
  return workerJobEnvelope({
    JobId: job.jobId,
    BatchId: job.batchId,
    WorkerId: job.row.workerId,
    FunctionName: job.row.functionName,
    Parameters: (job.row.paramsJson ?? {}) as Record<string, unknown>,
    CorrelationData: correlation,
  });
}

/** Fire-and-forget jobs (rollback and member-removed steps): not tracked as executions (000). */
export async function sendUntrackedJob(
  db: Db,
  job: {
    jobId: string;
    batchId: number;
    workerId: string;
    functionName: string;
    parameters: Record<string, unknown>;
    correlation: CorrelationData;
  },
): Promise<void> {
  const body: WorkerJobMessage = {
    JobId: job.jobId,
    BatchId: job.batchId,
    WorkerId: job.workerId,
    FunctionName: job.functionName,
    Parameters: job.parameters,
    CorrelationData: job.correlation,
  };
  await enqueueOutbox(db, [workerJobEnvelope(body)]);
}

/** poll-check / retry-check to ourselves, delivered at `at` (Service Bus ScheduledEnqueueTime). */
export async function sendSelfCheck(
  db: Db,
  check: {
    type: Extract<OrchestratorEventType, "poll-check" | "retry-check">;
    ref: ExecutionRef;
    at: Date;
    attempt: number;
    /** The execution's redrive count: a redriven run's checks have ids of their own. */
    redriveCount: number;
  },
): Promise<void> {
  await enqueueOutbox(db, [
    selfCheckEnvelope(check.type, check.ref, check.attempt, check.at, check.redriveCount),
  ]);
}

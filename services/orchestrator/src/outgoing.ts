import type { ExecutionRow } from "./executions.ts";
import { enqueueOutbox, type Db } from "@matoolkit/db";
import {
  routingProperties,
  topics,
  type CorrelationData,
  type OrchestratorEventType,
  type PollCheckMessage,
  type WorkerJobMessage,
} from "@matoolkit/domain";
import type { ExecutionRef } from "./executions.ts";

/**
 * Everything the orchestrator sends goes through the transactional outbox, in the same
 * transaction as the status change that caused it: a committed `dispatched` always has its job
 * on the way, and a rolled-back one never sends a job (no lost step, no phantom job).
 */
export interface RunbookVersionRef {
  readonly runbookName: string;
  readonly runbookVersion: number;
}

export async function sendWorkerJob(
  db: Db,
  job: { ref: ExecutionRef; row: ExecutionRow; jobId: string; batchId: number; runbook: RunbookVersionRef },
): Promise<void> {
  const correlation: CorrelationData = {
    StepExecutionId: job.ref.id,
    IsInitStep: job.ref.kind === "init",
    RunbookName: job.runbook.runbookName,
    RunbookVersion: job.runbook.runbookVersion,
  };
  const body: WorkerJobMessage = {
    JobId: job.jobId,
    BatchId: job.batchId,
    WorkerId: job.row.workerId,
    FunctionName: job.row.functionName,
    Parameters: (job.row.paramsJson ?? {}) as Record<string, unknown>,
    CorrelationData: correlation,
  };
  await enqueueOutbox(db, [
    {
      messageId: `job:${job.jobId}`,
      topic: topics.workerJobs,
      properties: { [routingProperties.workerId]: job.row.workerId },
      body,
    },
  ]);
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
  await enqueueOutbox(db, [
    {
      messageId: `job:${job.jobId}`,
      topic: topics.workerJobs,
      properties: { [routingProperties.workerId]: job.workerId },
      body,
    },
  ]);
}

/** poll-check / retry-check to ourselves, delivered at `at` (Service Bus ScheduledEnqueueTime). */
export async function sendSelfCheck(
  db: Db,
  check: {
    type: Extract<OrchestratorEventType, "poll-check" | "retry-check">;
    ref: ExecutionRef;
    at: Date;
    attempt: number;
  },
): Promise<void> {
  const body: PollCheckMessage = { StepExecutionId: check.ref.id, IsInitStep: check.ref.kind === "init" };
  await enqueueOutbox(db, [
    {
      // The scheduler's poll sweep builds the same id, so a sweep and a timer never double-poll.
      messageId: selfCheckMessageId(check.type, check.ref, check.attempt),
      topic: topics.orchestratorEvents,
      properties: { [routingProperties.messageType]: check.type },
      body,
      deliverAt: check.at,
    },
  ]);
}

export function selfCheckMessageId(type: string, ref: ExecutionRef, attempt: number): string {
  return `${type}:${ref.kind}:${ref.id}:${attempt}`;
}

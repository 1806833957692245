import { enqueueOutbox, type Db } from "@matoolkit/db";
import {
  resentWorkerJobEnvelope,
  selfCheckEnvelope,
  workerJobEnvelope,
  type MessageEnvelope,
  type CorrelationData,
  type OrchestratorEventType,
  type WorkerJobMessage,
} from "@matoolkit/domain";
import type { HandlerScope } from "./context.ts";
import type { ExecutionRef, ExecutionRow } from "./executions.ts";

/**
 * Everything the orchestrator sends is written in the same transaction as the status change that
 * caused it: a committed `dispatched` always has its job on the way, and a rolled-back one never
 * sends a job (no lost step, no phantom job). Worker jobs and the retry and poll checks, the hot
 * path, are published straight into the bus inside that transaction when the bus offers it
 * (`publishInTransaction`: the embedded bus, whose queues are tables of the same database; issue
 * 29); everything else, and every message on Dapr, goes through the transactional outbox. Message ids come from the
 * envelopes (libs/domain), the one place that derives them, so both ways dedupe alike.
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

/** Where a handler's jobs and checks go: its transaction, and the bus's way into it if any. */
export type JobSender = Pick<HandlerScope, "trx" | "publishInTransaction">;

/** The worker jobs of dispatched executions, in one statement (the bus's, or the outbox's). */
export function sendWorkerJobs(sender: JobSender, jobs: readonly TrackedJob[]): Promise<void> {
  // Each job's id names the attempt its execution was moved to `dispatched` for, in this
  // transaction, by a guarded transition a retry of the transaction finds done: published once.
  return sendEnvelopes(
    sender,
    jobs.map((job) => workerJobEnvelope(trackedJobMessage(job))),
    { onceByTransaction: true },
  );
}

export function sendWorkerJob(sender: JobSender, job: TrackedJob): Promise<void> {
  return sendWorkerJobs(sender, [job]);
}

/** A dispatched execution's job once more, under the id of re-send `round` (stalled-jobs.ts). */
export function resendWorkerJob(sender: JobSender, job: TrackedJob, round: number): Promise<void> {
  return sendEnvelopes(sender, [resentWorkerJobEnvelope(trackedJobMessage(job), round)]);
}

async function sendEnvelopes(
  sender: JobSender,
  envelopes: readonly MessageEnvelope[],
  { onceByTransaction = false } = {},
): Promise<void> {
  if (envelopes.length === 0) return;
  if (sender.publishInTransaction === undefined) {
    await enqueueOutbox(sender.trx, envelopes);
    return;
  }
  await sender.publishInTransaction(
    sender.trx,
    envelopes.map((envelope) => ({
      id: envelope.messageId,
      topic: envelope.topic,
      properties: envelope.properties as Record<string, string>,
      body: envelope.body,
      ...(envelope.deliverAt === undefined ? {} : { deliverAt: envelope.deliverAt }),
      ...(onceByTransaction ? { onceByTransaction } : {}),
    })),
  );
}

function trackedJobMessage(job: TrackedJob): WorkerJobMessage {
  const correlation: CorrelationData = {
    StepExecutionId: job.ref.id,
    IsInitStep: job.ref.kind === "init",
    RunbookName: job.runbook.runbookName,
    RunbookVersion: job.runbook.runbookVersion,
  };
  return {
    JobId: job.jobId,
    BatchId: job.batchId,
    WorkerId: job.row.workerId,
    FunctionName: job.row.functionName,
    Parameters: (job.row.paramsJson ?? {}) as Record<string, unknown>,
    CorrelationData: correlation,
  };
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

/** A poll-check or retry-check to ourselves, for one attempt of an execution. */
export interface SelfCheck {
  readonly type: Extract<OrchestratorEventType, "poll-check" | "retry-check">;
  readonly ref: ExecutionRef;
  /** When it falls due (Service Bus ScheduledEnqueueTime). */
  readonly at: Date;
  readonly attempt: number;
  /** The execution's redrive count: a redriven run's checks have ids of their own. */
  readonly redriveCount: number;
}

/**
 * poll-checks / retry-checks to ourselves, each delivered at its `at`, in one statement. One per
 * retry and one per poll interval of every polling step: on the embedded bus they skip the
 * outbox (its row in and out, the relay's pass) as worker jobs do.
 */
export function sendSelfChecks(sender: JobSender, checks: readonly SelfCheck[]): Promise<void> {
  return sendEnvelopes(
    sender,
    checks.map((check) =>
      selfCheckEnvelope(check.type, check.ref, check.attempt, check.at, check.redriveCount),
    ),
  );
}

export function sendSelfCheck(sender: JobSender, check: SelfCheck): Promise<void> {
  return sendSelfChecks(sender, [check]);
}

import {
  InvalidMessageError,
  reasonCodes,
  routingProperties,
  topics,
  workerJobMessageSchema,
  workerResultMessageSchema,
} from "@matoolkit/domain";
import type { WorkerJobMessage, WorkerResultMessage } from "@matoolkit/domain";
import type { Delivery, IdempotencyStore, Logger, MessageBus } from "@matoolkit/runtime";
import { executeJob, type ExecuteJobOptions } from "./execute-job.ts";
import type { FunctionRegistry } from "./functions/function-registry.ts";

/**
 * How long a JobId is remembered, claimed or completed: the topics' message TTL (000: 7 days), so
 * no redelivery of a job can ever outlive the memory that it already ran.
 */
export const JOB_MEMORY_SECONDS = 7 * 24 * 60 * 60;

export interface JobDeliveryDeps {
  readonly bus: MessageBus;
  readonly idempotency: IdempotencyStore;
  readonly logger: Logger;
  readonly workerId: string;
  readonly registry: FunctionRegistry;
  readonly execute: ExecuteJobOptions;
}

/**
 * One delivery from `worker-jobs`. Returning acknowledges it; throwing (a bus or database error)
 * gets it redelivered. A JobId's function runs at most once, whatever the bus redelivers: a
 * migration step that sent an email or created a user must not do it twice.
 */
export async function handleJobDelivery(delivery: Delivery, deps: JobDeliveryDeps): Promise<void> {
  const parsed = workerJobMessageSchema.safeParse(delivery.body);
  if (!parsed.success) {
    // Retrying cannot fix a malformed body: the bus dead-letters a non-retriable error at once.
    throw new InvalidMessageError("worker job", parsed.error);
  }
  const job = parsed.data;
  // Parameters and Result carry member PII: only identifiers go into logs.
  const log = deps.logger.child({
    JobId: job.JobId,
    BatchId: job.BatchId,
    StepExecutionId: job.CorrelationData.StepExecutionId,
    IsInitStep: job.CorrelationData.IsInitStep,
    FunctionName: job.FunctionName,
  });
  if (job.WorkerId !== deps.workerId) {
    log.warn({ jobWorkerId: job.WorkerId }, "job addressed to another worker ignored");
    return;
  }

  const key = `worker-job:${job.JobId}`;
  const claim = await deps.idempotency.claim(key, JOB_MEMORY_SECONDS);
  switch (claim.status) {
    case "claimed":
      return runAndPublish(job, key, deps, log);
    case "completed":
      return republish(claim.value, deps, log);
    case "in_progress":
      // Running it again could repeat a side effect; a stuck step is the orchestrator's to time out.
      log.warn(
        { claimedAt: claim.claimedAt.toISOString() },
        "job already claimed and not finished; not run again",
      );
      return;
    default: {
      const unreachable: never = claim;
      throw new Error(`Unknown claim outcome ${JSON.stringify(unreachable)}`);
    }
  }
}

async function runAndPublish(
  job: WorkerJobMessage,
  key: string,
  deps: JobDeliveryDeps,
  log: Logger,
): Promise<void> {
  log.info("job started");
  const result = await executeJob(job, deps.registry, deps.execute);
  log.info(
    {
      Status: result.Status,
      ResultType: result.ResultType,
      DurationMs: result.DurationMs,
      ...(result.Error
        ? {
            errorType: result.Error.Type,
            errorMessage: result.Error.Message,
            attempts: result.Error.Attempts,
          }
        : {}),
    },
    "job finished",
  );
  try {
    await deps.idempotency.complete(key, result, JOB_MEMORY_SECONDS);
  } catch (error) {
    // The orchestrator must still hear the outcome; a redelivery will then find the job in progress.
    log.error({ err: error }, "could not record the job as completed; publishing its result anyway");
  }
  await publishResult(result, deps);
}

async function republish(stored: unknown, deps: JobDeliveryDeps, log: Logger): Promise<void> {
  const parsed = workerResultMessageSchema.safeParse(stored);
  if (!parsed.success) {
    log.error(
      { reason: reasonCodes.unexpectedException },
      "stored result of a completed job is unreadable; not republished",
    );
    return;
  }
  // The earlier delivery may have died between recording and publishing: publish again. The
  // stable message id lets the bus drop the copy when the first publish did go out.
  log.info("job already completed; republishing its stored result");
  await publishResult(stored as WorkerResultMessage, deps);
}

function publishResult(result: WorkerResultMessage, deps: JobDeliveryDeps): Promise<void> {
  return deps.bus.publish({
    id: `result:${result.JobId}`,
    topic: topics.workerResults,
    body: result,
    properties: { [routingProperties.workerId]: deps.workerId },
  });
}

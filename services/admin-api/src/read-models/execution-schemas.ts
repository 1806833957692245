import { executionMachine } from "@matoolkit/domain";
import { z } from "zod";
import { count, id, jsonObject, nullableTimestamp, timestamp } from "../openapi/wire-types.ts";

/** Step and init executions as GET /api/batches/{id}/steps returns them (see batch-read-models.ts). */
const rollbackSchema = z
  .object({
    name: z.string().meta({ description: "The rollback sequence (the step's on_failure)" }),
    dispatchedAt: nullableTimestamp.meta({
      description: "When its first job was sent; null when none could be",
    }),
    steps: z.array(
      z.object({
        position: z.int().min(1),
        stepName: z.string(),
        jobId: z.string().nullable(),
        sent: z.boolean(),
        reason: z.string().nullable().meta({ description: "Why it was not sent (a reason code)" }),
        at: timestamp,
      }),
    ),
  })
  .meta({ id: "Rollback", description: "The on_failure sequence sent when the execution failed" });

const seconds = z.int().min(0).nullable();

const executionColumns = {
  id,
  batchId: id,
  stepName: z.string(),
  stepIndex: count,
  workerId: z.string(),
  functionName: z.string(),
  paramsJson: jsonObject.meta({
    description:
      "The resolved params, secrets masked as `***` for every role (as in the dry-run plan): params " +
      "whose name looks secret or marked `secret_params`, values templated from a secret column",
  }),
  paramsResolved: z.boolean(),
  status: z.enum(executionMachine.states),
  jobId: z.string().nullable(),
  resultJson: z.unknown().meta({
    description:
      "The worker's result, if any; the member's secret values masked as `***` wherever they appear",
  }),
  errorMessage: z.string().nullable().meta({ description: "Sanitized; the member's secret values masked" }),
  errorCode: z.string().nullable().meta({ description: "Stable reason code, e.g. graph.throttled" }),
  dispatchedAt: nullableTimestamp,
  completedAt: nullableTimestamp,
  isPollStep: z.boolean(),
  pollIntervalSec: seconds,
  pollTimeoutSec: seconds,
  pollStartedAt: nullableTimestamp,
  lastPolledAt: nullableTimestamp,
  pollCount: count,
  onFailure: z.string().nullable(),
  retryCount: count,
  redriveCount: count.meta({
    description: "Operator redrives so far: the n of its job ids `step-{id}-redrive-{n}`",
  }),
  maxRetries: count,
  retryIntervalSec: seconds,
  retryAfter: nullableTimestamp,
  timeoutSec: seconds,
  createdAt: timestamp,
  rollback: rollbackSchema.nullable(),
};

export const executionSchemas = {
  step: z
    .object({
      ...executionColumns,
      phaseExecutionId: id,
      batchMemberId: id,
      itemIndex: count.meta({
        description:
          "A for_each step's value position (0-based; its executions share stepIndex); 0 otherwise",
      }),
      itemCount: z.int().min(1).nullable().meta({
        description: "How many values the for_each step has for the member; null on other steps",
      }),
    })
    .meta({ id: "StepExecution" }),
  init: z.object({ ...executionColumns, runbookVersion: z.int().min(1) }).meta({ id: "InitExecution" }),
};

import type { IncomingMessage, ServerResponse } from "node:http";
import { readBody, sendDaprError, sendEmpty, sendJson } from "./http-util.ts";
import { parseJobRequest } from "./job-request.ts";
import { JobConflictError, type JobFailurePolicy, type JobView } from "./jobs.ts";
import type { SidecarContext } from "./sidecar-context.ts";

/**
 * `POST|GET|DELETE /v1.0-alpha1/jobs/<name>` (and `/v1.0/jobs/<name>` from Dapr 1.18), per the jobs
 * API reference and daprd's behaviour: 204 on schedule/delete (deleting an unknown job included),
 * 409 when the job exists and `overwrite` is not true, 400 for malformed jobs, GET of an unknown job
 * is a 500 `DAPR_SCHEDULER_GET_JOB`.
 */

export async function handleJob(
  context: SidecarContext,
  request: IncomingMessage,
  response: ServerResponse,
  rawName: string,
): Promise<void> {
  const body = (await readBody(request)).toString("utf8");
  const name = rawName.trim();
  if (name === "") {
    sendDaprError(
      response,
      400,
      "DAPR_SCHEDULER_JOB_NAME_EMPTY",
      "Name is empty",
      "DAPR_SCHEDULER_JOB_NAME_EMPTY",
    );
    return;
  }
  const scheduler = context.broker.internals.scheduler;
  const errorMetadata = { appID: context.appId };

  switch (request.method) {
    case "POST": {
      const parsed = parseJobRequest(name, body);
      if (!parsed.ok) {
        sendDaprError(
          response,
          parsed.error.status,
          parsed.error.errorCode,
          parsed.error.message,
          parsed.error.errorCode,
          errorMetadata,
        );
        return;
      }
      try {
        scheduler.schedule(context.appId, parsed.definition, parsed.overwrite);
      } catch (error) {
        if (error instanceof JobConflictError) {
          sendDaprError(
            response,
            409,
            "DAPR_SCHEDULER_SCHEDULE_JOB",
            `failed to schedule job due to: ${error.message}`,
            "DAPR_SCHEDULER_SCHEDULE_JOB",
            errorMetadata,
          );
          return;
        }
        // JobDefinitionError and ScheduleError (a dueTime/ttl that cannot be resolved) name the bad value.
        if (error instanceof Error) {
          sendDaprError(
            response,
            400,
            "DAPR_SCHEDULER_SCHEDULE_JOB",
            `failed to schedule job due to: ${error.message}`,
            "DAPR_SCHEDULER_SCHEDULE_JOB",
            errorMetadata,
          );
          return;
        }
        throw error;
      }
      context.log("debug", `scheduled job ${name}`);
      sendEmpty(response);
      return;
    }
    case "GET": {
      const job = scheduler.get(context.appId, name);
      if (job === undefined) {
        sendDaprError(
          response,
          500,
          "DAPR_SCHEDULER_GET_JOB",
          `failed to get job due to: job ${name} not found`,
          "DAPR_SCHEDULER_GET_JOB",
          errorMetadata,
        );
        return;
      }
      sendJson(response, 200, toProtoJson(job));
      return;
    }
    case "DELETE":
      scheduler.delete(context.appId, name);
      sendEmpty(response);
      return;
    default:
      sendDaprError(
        response,
        405,
        "ERR_STAND_IN_NOT_EMULATED",
        `${request.method ?? "?"} is not a jobs API method`,
      );
  }
}

/** The Job message as daprd renders it with protojson (data is a google.protobuf.Value in an Any). */
function toProtoJson(job: JobView): Record<string, unknown> {
  const rendered: Record<string, unknown> = { name: job.name };
  if (job.schedule !== undefined) rendered.schedule = job.schedule;
  if (job.repeats !== undefined) rendered.repeats = job.repeats;
  if (job.dueTime !== undefined) rendered.dueTime = job.dueTime;
  if (job.ttl !== undefined) rendered.ttl = job.ttl;
  if (job.data !== undefined)
    rendered.data = { "@type": "type.googleapis.com/google.protobuf.Value", value: job.data };
  if (job.failurePolicy !== undefined) rendered.failurePolicy = failurePolicyJson(job.failurePolicy);
  return rendered;
}

function failurePolicyJson(policy: JobFailurePolicy): Record<string, unknown> {
  switch (policy.kind) {
    case "drop":
      return { drop: {} };
    case "constant":
      return {
        constant: {
          interval: `${policy.intervalMs / 1000}s`,
          ...(policy.maxRetries === undefined ? {} : { maxRetries: policy.maxRetries }),
        },
      };
    default:
      return assertNever(policy);
  }
}

function assertNever(value: never): never {
  throw new Error(`unexpected failure policy ${JSON.stringify(value)}`);
}

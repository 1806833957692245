import { z } from "zod";
import type { JobDefinition, JobFailurePolicy } from "./jobs.ts";
import { parseSchedule, resolvePointInTime, type JobSchedule } from "./schedule.ts";

/**
 * The body of `POST /v1.0-alpha1/jobs/<name>`: `{schedule?, dueTime?, repeats?, ttl?, data?,
 * overwrite?, failure_policy?}`. daprd decodes it with protojson, so both the JSON names
 * (`dueTime`, `failurePolicy`, `maxRetries`) and the proto field names (`due_time`,
 * `failure_policy`, `max_retries`) are accepted.
 */

export interface JobRequestError {
  readonly status: 400;
  readonly errorCode: string;
  readonly message: string;
}

export type ParsedJobRequest =
  | { readonly ok: true; readonly definition: JobDefinition; readonly overwrite: boolean }
  | { readonly ok: false; readonly error: JobRequestError };

const failurePolicySchema = z.union([
  z.strictObject({
    constant: z.looseObject({
      maxRetries: z.number().int().min(0).optional(),
      max_retries: z.number().int().min(0).optional(),
      // A google.protobuf.Duration in its JSON form (protojson): seconds with up to 9 decimals and
      // an "s". daprd refuses a Go duration such as "5000ms" with 400 ERR_MALFORMED_REQUEST.
      interval: z
        .string()
        .regex(/^-?\d+(\.\d{1,9})?s$/, 'interval must be a protobuf Duration such as "5s" or "0.2s"')
        .optional(),
    }),
  }),
  z.strictObject({ drop: z.looseObject({}) }),
]);

const jobBodySchema = z.looseObject({
  name: z.string().optional(),
  schedule: z.string().optional(),
  dueTime: z.string().optional(),
  due_time: z.string().optional(),
  repeats: z.number().int().min(0, "repeats must be a non-negative integer").optional(),
  ttl: z.string().optional(),
  data: z.unknown().optional(),
  overwrite: z.boolean().optional(),
  failurePolicy: failurePolicySchema.optional(),
  failure_policy: failurePolicySchema.optional(),
});

export function parseJobRequest(name: string, rawBody: string): ParsedJobRequest {
  let json: unknown;
  try {
    json = JSON.parse(rawBody);
  } catch (error) {
    return malformed(`failed deserializing HTTP body: ${(error as Error).message}`);
  }
  const parsed = jobBodySchema.safeParse(json);
  if (!parsed.success)
    return malformed(`invalid job: ${z.prettifyError(parsed.error).replaceAll("\n", "; ")}`);
  const body = parsed.data;

  if (body.name !== undefined && body.name !== "") {
    return failure("DAPR_SCHEDULER_JOB_NAME", "Set the job name in the url only");
  }
  const dueTime = body.dueTime ?? body.due_time;
  if (body.schedule === undefined && dueTime === undefined) {
    return failure("DAPR_SCHEDULER_SCHEDULE_EMPTY", "Schedule is empty");
  }

  let schedule: JobSchedule | undefined;
  let failurePolicy: JobFailurePolicy | undefined;
  try {
    schedule = body.schedule === undefined ? undefined : parseSchedule(body.schedule);
    // Validate the time expressions now so a bad one is a 400, not a job that never fires.
    const now = new Date();
    if (dueTime !== undefined) resolvePointInTime("dueTime", dueTime, now);
    if (body.ttl !== undefined) resolvePointInTime("ttl", body.ttl, now);
    failurePolicy = toFailurePolicy(body.failurePolicy ?? body.failure_policy);
  } catch (error) {
    // ScheduleError, GoDurationError and CronSyntaxError all carry a message naming the bad value.
    if (error instanceof Error) {
      return failure("DAPR_SCHEDULER_SCHEDULE_JOB", `failed to schedule job due to: ${error.message}`);
    }
    throw error;
  }

  return {
    ok: true,
    overwrite: body.overwrite ?? false,
    definition: {
      name,
      schedule,
      dueTime,
      repeats: body.repeats,
      ttl: body.ttl,
      data: body.data,
      failurePolicy,
    },
  };
}

function toFailurePolicy(
  policy: z.infer<typeof failurePolicySchema> | undefined,
): JobFailurePolicy | undefined {
  if (policy === undefined) return undefined;
  if ("drop" in policy) return { kind: "drop" };
  const interval = policy.constant.interval;
  return {
    kind: "constant",
    // Absent max retries means "retry forever" per the jobs API reference.
    maxRetries: policy.constant.maxRetries ?? policy.constant.max_retries,
    intervalMs: interval === undefined ? 0 : Math.max(0, Number(interval.slice(0, -1)) * 1000),
  };
}

function malformed(message: string): ParsedJobRequest {
  return failure("ERR_MALFORMED_REQUEST", message);
}

function failure(errorCode: string, message: string): ParsedJobRequest {
  return { ok: false, error: { status: 400, errorCode, message } };
}

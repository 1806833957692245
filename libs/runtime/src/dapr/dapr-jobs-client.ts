import type { DaprHttp } from "./dapr-http.ts";

/**
 * What the Scheduler does when a trigger fails (the app answered non-2xx or was unreachable).
 * `constant` without `maxRetries` retries forever; `interval` is a protobuf Duration in its JSON form,
 * seconds only (`5s`, `0.2s`: see protobufDuration), never a Go duration such as `200ms`.
 */
export type DaprJobFailurePolicy =
  | { readonly constant: { readonly interval: string; readonly maxRetries?: number } }
  | { readonly drop: Record<string, never> };

/**
 * The Jobs HTTP API body: a schedule or a due time, or both, and data for the trigger. Dapr 1.15
 * reads `data` as any JSON value (google.protobuf.Value); `overwrite` and `failurePolicy` exist from
 * 1.16; earlier sidecars drop them silently (protojson with DiscardUnknown), hence 1.16+.
 */
export interface DaprJob {
  /** `@every 30s`, a macro (`@daily`) or a 6-field cron expression. */
  readonly schedule?: string;
  /** RFC 3339 time (or Go duration) of the first (or only) trigger. */
  readonly dueTime?: string;
  readonly repeats?: number;
  readonly data?: unknown;
  /** Replace a job of the same name instead of failing (Dapr 1.16+). */
  readonly overwrite?: boolean;
  /** Without one the Scheduler applies its default: 3 retries 1 s apart, then the trigger is dropped. */
  readonly failurePolicy?: DaprJobFailurePolicy;
}

/** Alpha until Dapr 1.18 made it stable under `v1.0`; the path is configurable for that reason. */
export type DaprJobsApiVersion = "v1.0-alpha1" | "v1.0";

export interface DaprJobsClient {
  schedule(name: string, job: DaprJob): Promise<void>;
  delete(name: string): Promise<void>;
}

/**
 * @dapr/dapr has no Jobs client, so this calls the sidecar's documented HTTP API:
 * `POST|DELETE /{version}/jobs/{name}`. Dapr triggers a job by calling the app at
 * `POST /job/{name}` with the job's data, on one replica of the app id that scheduled it.
 */
export function createDaprJobsClient(http: DaprHttp, version: DaprJobsApiVersion): DaprJobsClient {
  const path = (name: string) => `/${version}/jobs/${encodeURIComponent(name)}`;
  return {
    async schedule(name, job) {
      await http.request({ method: "POST", path: path(name), operation: "jobs.schedule", json: job });
    },
    async delete(name) {
      await http.request({ method: "DELETE", path: path(name), operation: "jobs.delete", accept: [404] });
    },
  };
}

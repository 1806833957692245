import type { DaprHttp } from "./dapr-http.ts";

/** The Jobs API body (Dapr 1.14+): a schedule or a due time, or both, and data for the trigger. */
export interface DaprJob {
  /** `@every 30s`, a macro (`@daily`) or a 6-field cron expression. */
  readonly schedule?: string;
  /** RFC 3339 time (or Go duration) of the first (or only) trigger. */
  readonly dueTime?: string;
  readonly repeats?: number;
  readonly data?: unknown;
  /** Replace a job of the same name instead of failing (Dapr 1.15+). */
  readonly overwrite?: boolean;
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

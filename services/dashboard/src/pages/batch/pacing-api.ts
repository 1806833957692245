import { apiFetch } from "../../api/client.ts";

/** GET /api/worker/pacing (issue 30), typed as the OpenAPI document's WorkerPacing. */
export interface AdaptiveLimit {
  readonly current: number;
  readonly cap: number;
}

export interface WorkerPacingReport {
  readonly workerId: string;
  readonly jobStarts: number;
  readonly waitingToStart: number;
  readonly startRate: AdaptiveLimit | null;
  readonly apis: readonly {
    readonly api: "graph" | "exchange";
    readonly inFlight: number;
    readonly waiting: number;
    readonly limit: AdaptiveLimit | null;
    readonly throttledCalls: number;
  }[];
}

export interface WorkerPacing {
  readonly at: string;
  readonly workers: readonly WorkerPacingReport[];
}

export const getWorkerPacing = () => apiFetch<WorkerPacing>("/worker/pacing");

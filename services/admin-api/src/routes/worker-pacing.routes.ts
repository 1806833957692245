import { z } from "zod";
import { defineOperation } from "../openapi/operation.ts";

/** One worker pool's pacing as its worker reads it (services/worker/src/pacing/worker-pacing.ts). */
export interface WorkerPacingReport {
  readonly workerId: string;
  readonly jobStarts: number;
  readonly waitingToStart: number;
  readonly startRate: { readonly current: number; readonly cap: number } | null;
  readonly apis: readonly {
    readonly api: "graph" | "exchange";
    readonly inFlight: number;
    readonly waiting: number;
    readonly limit: { readonly current: number; readonly cap: number } | null;
    readonly throttledCalls: number;
  }[];
}

/**
 * The pacing of the workers of this process (all-in-one wires its worker's); a process that runs
 * no worker has none to show, and the workers' own `/metrics` carry the same figures.
 */
export type WorkerPacingSource = () => readonly WorkerPacingReport[];

const adaptiveLimit = (unit: string) =>
  z
    .object({
      current: z
        .number()
        .meta({ description: `${unit} allowed now: the cap, lowered while the tenant throttles` }),
      cap: z.number().meta({ description: `${unit} configured` }),
    })
    .nullable();

export const workerPacingSchema = z
  .object({
    at: z.string().meta({ description: "When the workers were read (ISO 8601)" }),
    workers: z.array(
      z.object({
        workerId: z.string().meta({ description: "The worker pool (MATOOLKIT_WORKER_ID)" }),
        jobStarts: z.number().int().meta({ description: "Jobs let start since the worker started" }),
        waitingToStart: z.number().int().meta({ description: "Deliveries waiting for their turn to start" }),
        startRate: adaptiveLimit("Job starts per second").meta({
          description: "null: job starts are not paced (MATOOLKIT_RATE_LIMIT unset)",
        }),
        apis: z.array(
          z.object({
            api: z.enum(["graph", "exchange"]),
            inFlight: z.number().int().meta({ description: "Calls under way" }),
            waiting: z.number().int().meta({ description: "Calls waiting for a slot under the limit" }),
            limit: adaptiveLimit("Calls at once").meta({
              description:
                "null: not capped (MATOOLKIT_GRAPH_MAX_IN_FLIGHT / MATOOLKIT_EXCHANGE_MAX_IN_FLIGHT unset)",
            }),
            throttledCalls: z.number().int().meta({
              description: "Calls answered throttled (429, or 503 with Retry-After) since the start",
            }),
          }),
        ),
      }),
    ),
  })
  .meta({ id: "WorkerPacing" });

/**
 * GET /api/worker/pacing (issue 30): what the dashboard's pacing indicator shows. Read access:
 * rates and counts, no member data. Only the workers of this process: across processes the
 * figures are on each worker's `/metrics` (Prometheus aggregates pools and replicas there).
 */
export const workerPacingOperations = [
  defineOperation({
    method: "get",
    path: "/api/worker/pacing",
    operationId: "getWorkerPacing",
    tag: "tenant",
    summary: "The workers' job start rate and calls in flight per API, as paced now",
    description:
      "Each worker pool running in this process (all-in-one): the job starts per second it allows " +
      "now and its cap (MATOOLKIT_RATE_LIMIT; lowered while the tenant throttles, climbing back " +
      "after), deliveries waiting for their turn, and per API (Graph, Exchange) the calls under " +
      "way, the in-flight limit and the throttled answers. `workers` is empty when this API runs " +
      "without a worker (separate containers, Dapr): read the workers' `/metrics` there.",
    access: "read",
    errors: [],
    responses: { 200: { description: "The workers of this process", schema: workerPacingSchema } },
  }).handle(async ({ deps }) => ({
    status: 200,
    body: { at: new Date().toISOString(), workers: [...(deps.workerPacing?.() ?? [])] },
  })),
];

import { reasonCodes, RetryAfterError, topics, workerResultMessageSchema } from "@matoolkit/domain";
import type { WorkerJobMessage, WorkerResultMessage } from "@matoolkit/domain";
import { createEmbeddedRuntime, createLogger, createMetrics } from "@matoolkit/runtime";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFunctionRegistry } from "./functions/function-registry.ts";
import type { FunctionModule } from "./functions/worker-function.ts";
import { createManualClock } from "./pacing/manual-clock.test-support.ts";
import type { TenantClients } from "./tenant/tenant-clients.ts";
import { startWorkerService, type WorkerService, type WorkerServiceOptions } from "./worker-service.ts";

/**
 * Issue 30 on the embedded runtime and a real database: a paced worker lets jobs start at its
 * rate however many are delivered at once, gives the deliveries still waiting for their turn
 * back to the bus when it stops (nothing claimed: they run once, on the next start), and feeds
 * the tenant's throttled answers back into its rate.
 */
const logLines: string[] = [];
const logger = createLogger({
  level: "info",
  name: "paced-worker-test",
  destination: { write: (line: string) => logLines.push(line) },
});

let testDb: TestDatabase;
let runtime: Awaited<ReturnType<typeof createEmbeddedRuntime>>;
const results = new Map<string, WorkerResultMessage>();
const services: WorkerService[] = [];

beforeAll(async () => {
  testDb = await createTestDatabase();
  runtime = await createEmbeddedRuntime({ connectionString: testDb.url, db: testDb.db, logger });
  await runtime.bus.subscribe({ topic: topics.workerResults, name: "orchestrator" }, async (delivery) => {
    const result = workerResultMessageSchema.parse(delivery.body);
    results.set(result.JobId, result);
  });
});

afterAll(async () => {
  for (const service of services) await service.stop();
  await runtime?.stop();
  await testDb?.drop();
});

async function startWorker(
  options: Pick<WorkerServiceOptions, "workerId" | "concurrency"> & Partial<WorkerServiceOptions>,
  modules: readonly FunctionModule[],
): Promise<WorkerService> {
  const service = await startWorkerService({
    bus: runtime.bus,
    idempotency: runtime.idempotency,
    logger,
    registry: createFunctionRegistry(...modules),
    jobTimeoutMs: 10_000,
    metrics: createMetrics({ defaultMetrics: false }),
    ...options,
  });
  services.push(service);
  return service;
}

function publishJobs(workerId: string, functionName: string, prefix: string, count: number): string[] {
  const ids = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
  void runtime.bus.publishMany(
    ids.map((JobId, i) => {
      const body: WorkerJobMessage = {
        JobId,
        BatchId: 30,
        WorkerId: workerId,
        FunctionName: functionName,
        Parameters: {},
        CorrelationData: {
          StepExecutionId: i + 1,
          IsInitStep: false,
          RunbookName: "paced",
          RunbookVersion: 1,
        },
      };
      return { id: `job:${JobId}`, topic: topics.workerJobs, body, properties: { WorkerId: workerId } };
    }),
  );
  return ids;
}

async function waitFor(probe: () => boolean, what: string, timeoutMs = 25_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Records each run of a job, by JobId. */
function counting(runs: string[]): FunctionModule {
  return { "Count-Run": async (_params, context) => (runs.push(context.jobId), { complete: true }) };
}

describe("a paced worker", () => {
  it("starts jobs at no more than its rate in any second, with 16 slots and 35 jobs delivered at once", async () => {
    const starts: number[] = [];
    const runs: string[] = [];
    await startWorker(
      {
        workerId: "paced-rate",
        concurrency: 16,
        pacing: { jobStartsPerSecond: 10 },
        onJobStart: (at) => starts.push(at),
      },
      [counting(runs)],
    );
    const ids = publishJobs("paced-rate", "Count-Run", "rate", 35);
    await waitFor(() => ids.every((id) => results.has(id)), "35 results");

    expect(starts).toHaveLength(35);
    // Every one-second window that opens at a start holds at most 10 starts (the pacing clock's
    // times, taken as each start was let through: counts, not wall-clock speed).
    const perWindow = starts.map((from) => starts.filter((at) => at >= from && at < from + 1_000).length);
    expect(Math.max(...perWindow)).toBeLessThanOrEqual(10);
    // ...and the rate is used, not wasted: 16 deliveries wait, so some second is (nearly) full.
    expect(Math.max(...perWindow)).toBeGreaterThanOrEqual(9);
    expect(runs.toSorted()).toEqual(ids.toSorted());
    expect(ids.map((id) => results.get(id)?.Status)).toEqual(ids.map(() => "Success"));
  });

  it("hands the deliveries waiting for their turn back when it stops: none claimed, each runs once later", async () => {
    const clock = createManualClock(); // never advanced: only the first job gets a turn
    const runs: string[] = [];
    // A process of its own, as in production: its bus stops with it, so nothing of it takes the
    // jobs again after the stop.
    const first = await createEmbeddedRuntime({ connectionString: testDb.url, db: testDb.db, logger });
    const paced = await startWorker(
      {
        workerId: "paced-stop",
        concurrency: 4,
        pacing: { jobStartsPerSecond: 1 },
        pacingClock: clock,
        bus: first.bus,
        idempotency: first.idempotency,
      },
      [counting(runs)],
    );
    const ids = publishJobs("paced-stop", "Count-Run", "stop", 4);
    await waitFor(() => runs.length === 1 && paced.pacing().waitingToStart === 3, "one run, three waiting");

    await paced.stop();
    await first.stop();
    expect(runs).toHaveLength(1);
    expect(logLines.filter((line) => line.includes("delivery handed back: worker is stopping"))).toHaveLength(
      3,
    );

    // The next start of the pool (unpaced here) gets them from the bus: had the stopped worker
    // claimed them, they would wait out its lease and be reported worker.lost, not run.
    await startWorker({ workerId: "paced-stop", concurrency: 4 }, [counting(runs)]);
    await waitFor(() => ids.every((id) => results.has(id)), "four results");
    expect(runs.toSorted()).toEqual(ids.toSorted());
    expect(ids.map((id) => results.get(id)?.Status)).toEqual(["Success", "Success", "Success", "Success"]);
  });

  it("lowers its rate and the API's in-flight limit when the tenant throttles, as /metrics shows", async () => {
    const clock = createManualClock();
    let graphCalls = 0;
    const tenant: TenantClients = {
      graph: {
        serviceRoot: "https://graph.microsoft.com",
        request: async <T>() => {
          // The first call is throttled (Retry-After 0: the worker's throttle loop retries at once).
          if (++graphCalls === 1) throw new RetryAfterError(reasonCodes.graphThrottled, "429", 0);
          return { value: [] } as T;
        },
      },
      exchange: { invoke: async () => ({ value: [], warnings: [] }) },
    };
    const metrics = createMetrics({ defaultMetrics: false });
    const worker = await startWorker(
      {
        workerId: "paced-429",
        concurrency: 4,
        pacing: { jobStartsPerSecond: 20, maxInFlight: { graph: 8, exchange: 4 } },
        pacingClock: clock,
        tenant,
        metrics,
      },
      [
        {
          "Read-Users": async (_params, context) => {
            await context.tenant.graph.request({ method: "GET", path: "/users" }, context.signal);
            return { complete: true };
          },
        },
      ],
    );
    const [id] = publishJobs("paced-429", "Read-Users", "throttled", 1);
    await waitFor(() => results.has(id!), "the result");

    expect(results.get(id!)).toMatchObject({ Status: "Success" });
    expect(graphCalls).toBe(2);
    expect(worker.pacing()).toMatchObject({
      jobStarts: 1,
      startRate: { current: 10, cap: 20 },
      apis: [
        { api: "graph", inFlight: 0, limit: { current: 4, cap: 8 }, throttledCalls: 1 },
        { api: "exchange", inFlight: 0, limit: { current: 4, cap: 4 }, throttledCalls: 0 },
      ],
    });
    const scraped = (await metrics.expose()).body;
    expect(scraped).toContain('matoolkit_worker_job_start_rate{worker_id="paced-429"} 10');
    expect(scraped).toContain('matoolkit_worker_api_in_flight_limit{worker_id="paced-429",api="graph"} 4');
    expect(
      logLines.some((line) => line.includes("the tenant throttles: job starts per second lowered")),
    ).toBe(true);
  });
});

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { issueLocalToken } from "@matoolkit/admin-api";
import { topics } from "@matoolkit/domain";
import {
  parsePrometheusText,
  sampleValue,
  startInMemoryTracing,
  type InMemoryTracing,
} from "@matoolkit/runtime/testing";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { startAll, type RunningSystem } from "./start-all.ts";
import { eventually, exampleText } from "../test/test-support.ts";

/**
 * One batch step is one trace across the services (issue 15): the admin API request that
 * advances a batch → outbox → orchestrator → worker job → worker result → orchestrator, on the
 * embedded runtime and a real database, with spans kept in memory. And the Prometheus endpoint
 * counts what happened: step results by outcome and reason code, queue lag, request latency.
 */
describe("telemetry across the whole system (embedded runtime)", { timeout: 120_000 }, () => {
  let tracing: InMemoryTracing;
  let database: TestDatabase;
  let system: RunningSystem;
  let dataDir: string;
  let admin: string;

  beforeAll(async () => {
    // Before the system boots: its own startTracing then keeps this provider.
    tracing = startInMemoryTracing();
    database = await createTestDatabase();
    dataDir = mkdtempSync(join(tmpdir(), "matoolkit-telemetry-"));
    system = await startAll({
      MATOOLKIT_RUNTIME: "embedded",
      DATABASE_URL: database.url,
      MATOOLKIT_DATA_DIR: dataDir,
      PORT: "0",
      LOG_LEVEL: "silent",
      MATOOLKIT_DUPLICATE_BATCH_WINDOW_MINUTES: "0",
      // Paced (issue 30): far above what three members need, so the figures below are exact.
      MATOOLKIT_RATE_LIMIT: "50",
      MATOOLKIT_GRAPH_MAX_IN_FLIGHT: "8",
    });
    admin = await issueLocalToken({
      dataDir,
      issuer: "matoolkit-local",
      audience: "api://matoolkit",
      roles: ["Admin"],
      name: "telemetry-e2e@example.test",
      ttlSeconds: 600,
    });
  });

  afterAll(async () => {
    await system?.stop();
    await database?.drop();
    await tracing?.shutdown();
    if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
  });

  async function api(method: string, path: string, body?: { text: string; type: string }) {
    const response = await fetch(`${system.apiUrl}/api${path}`, {
      method,
      headers: {
        authorization: `Bearer ${admin}`,
        ...(body === undefined ? {} : { "content-type": body.type }),
      },
      body: body?.text,
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }
  const batch = async (id: number) => (await api("GET", `/batches/${id}`)).body as any;

  let batchId: number;

  it("runs a batch's init and first phase (one member fails its pre-check)", async () => {
    const published = await api("POST", "/runbooks", {
      text: exampleText("contoso-pilot.yaml"),
      type: "application/yaml",
    });
    expect(published.status).toBe(201);
    const created = await api("POST", "/batches?runbook=contoso-pilot", {
      text: exampleText("members-one-fails.csv"),
      type: "text/csv",
    });
    expect(created.status).toBe(201);
    batchId = created.body.id as number;
    expect((await api("POST", `/batches/${batchId}/advance`)).body).toMatchObject({ action: "init" });
    await eventually(
      () => batch(batchId),
      (b) => b.status === "active",
      "init to finish",
    );
    expect((await api("POST", `/batches/${batchId}/advance`)).body).toMatchObject({
      phaseName: "pre-checks",
    });
    await eventually(
      () => batch(batchId),
      (b) =>
        b.phases.find((p: { phaseName: string }) => p.phaseName === "pre-checks").status !== "dispatched",
      "pre-checks to finish",
    );
    // A span ends just after its handler returns, which may be after the phase's status changed:
    // wait until every job published was processed and answered, each span finished.
    const count = (name: string) => tracing.spans().filter((span) => span.name === name).length;
    await expect
      .poll(() => [
        count(`${topics.workerJobs} process`),
        count(`${topics.workerResults} publish`),
        count(`${topics.workerResults} process`),
      ])
      .toEqual(Array<number>(3).fill(count(`${topics.workerJobs} publish`)));
  });

  it("makes the init step one trace: advance request → orchestrator → worker job → worker result → orchestrator", () => {
    const advances = tracing
      .spans()
      .filter((span) => span.name === "POST /api/batches/:id/advance")
      .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
    expect(advances).toHaveLength(2);
    const initAdvance = advances[0]!;
    const traceId = initAdvance.spanContext().traceId;
    const inTrace = tracing.spans().filter((span) => span.spanContext().traceId === traceId);

    const workerJob = inTrace.filter((span) => span.name === `${topics.workerJobs} process`);
    const result = inTrace.filter((span) => span.name === `${topics.workerResults} process`);
    // The init has one step: one job, one result, both in the advance request's trace.
    expect({ jobs: workerJob.length, results: result.length }).toEqual({ jobs: 1, results: 1 });

    // The parent chain is whole, hop by hop, from the orchestrator's result span to the request.
    expect(tracing.ancestry(result[0]!).map((span) => span.name)).toEqual([
      `${topics.workerResults} process`,
      `${topics.workerResults} publish`,
      `${topics.workerJobs} process`,
      `${topics.workerJobs} publish`,
      `${topics.orchestratorEvents} process`,
      `${topics.orchestratorEvents} publish`,
      "POST /api/batches/:id/advance",
    ]);
    expect(tracing.ancestry(result[0]!).at(-1)!.spanContext().spanId).toBe(initAdvance.spanContext().spanId);
    expect(initAdvance.attributes).toMatchObject({
      "http.route": "/api/batches/:id/advance",
      "http.response.status_code": 202,
    });

    // No member data in any span attribute (UPNs, addresses).
    const attributes = JSON.stringify(tracing.spans().map((span) => span.attributes));
    expect(attributes).not.toMatch(/contoso\.test|fabrikam\.test/u);
  });

  it("gives the phase's worker results the second advance's trace, not the first's", () => {
    const advances = tracing
      .spans()
      .filter((span) => span.name === "POST /api/batches/:id/advance")
      .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
    const [initTrace, phaseTrace] = advances.map((span) => span.spanContext().traceId);
    const jobs = tracing.spans().filter((span) => span.name === `${topics.workerJobs} process`);
    const traceOf = (span: (typeof jobs)[number]) =>
      span.spanContext().traceId === initTrace
        ? "init"
        : span.spanContext().traceId === phaseTrace
          ? "phase"
          : "other";
    // pre-checks: validate-source-mailbox for 3 members, notify-user for the 2 that passed, and
    // the failed one's on_failure sequence: every job after the init's is in the phase's trace.
    expect(jobs.map(traceOf).sort()).toEqual(["init", ...Array<string>(jobs.length - 1).fill("phase")]);
    expect(jobs.length).toBeGreaterThan(3);
  });

  it("counts step results by outcome and reason code, queue lag and request latency at /metrics", async () => {
    // Counted just after each commit (a result) or response (a request): the batch may read as
    // completed a moment before its last result is counted, so scrape until all are in.
    await vi.waitFor(() => countsAtMetrics(), { timeout: 15_000, interval: 100 });
  });

  async function countsAtMetrics(): Promise<void> {
    const response = await fetch(`${system.apiUrl}/metrics`);
    expect(response.status).toBe(200);
    const samples = parsePrometheusText(await response.text());

    const failed = await database.db
      .selectFrom("stepExecutions")
      .select(["errorCode"])
      .where("batchId", "=", batchId)
      .where("status", "=", "failed")
      .execute();
    expect(failed).toHaveLength(1);
    // Each result was delivered once (its span), and counted once, by outcome: the failed
    // pre-check under the reason code the orchestrator stored for it, all the others succeeded.
    const results = tracing.spans().filter((span) => span.name === `${topics.workerResults} process`).length;
    const jobs = tracing.spans().filter((span) => span.name === `${topics.workerJobs} process`).length;
    expect(results).toBe(jobs);
    expect(
      sampleValue(samples, "matoolkit_step_results_total", {
        outcome: "failed",
        reason_code: failed[0]!.errorCode!,
      }),
    ).toBe(1);
    expect(
      sampleValue(samples, "matoolkit_step_results_total", { outcome: "succeeded", reason_code: "none" }),
    ).toBe(results - 1);

    // Every worker job's first delivery recorded its queue lag.
    expect(
      sampleValue(samples, "matoolkit_message_age_seconds_count", {
        topic: topics.workerJobs,
        subscription: "worker-worker-01",
      }),
    ).toBe(jobs);
    expect(
      sampleValue(samples, "matoolkit_http_request_duration_seconds_count", {
        method: "POST",
        route: "/api/batches/:id/advance",
        status: "202",
      }),
    ).toBe(2);

    // The worker's pacing (issue 30): every job was let start once, at a rate under its cap.
    const worker = { worker_id: "worker-01" };
    expect(sampleValue(samples, "matoolkit_worker_job_starts_total", worker)).toBe(jobs);
    expect(sampleValue(samples, "matoolkit_worker_job_start_rate_cap", worker)).toBe(50);
    expect(sampleValue(samples, "matoolkit_worker_jobs_waiting_to_start", worker)).toBe(0);
    expect(
      sampleValue(samples, "matoolkit_worker_api_in_flight_limit_cap", { ...worker, api: "graph" }),
    ).toBe(8);
  }

  it("shows the worker's pacing to the dashboard (GET /api/worker/pacing)", async () => {
    const pacing = await api("GET", "/worker/pacing");
    expect(pacing.status).toBe(200);
    expect(pacing.body.workers).toMatchObject([
      {
        workerId: "worker-01",
        waitingToStart: 0,
        startRate: { current: 50, cap: 50 },
        apis: [
          { api: "graph", inFlight: 0, limit: { current: 8, cap: 8 }, throttledCalls: 0 },
          { api: "exchange", inFlight: 0, limit: null, throttledCalls: 0 },
        ],
      },
    ]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiHarness, type ApiHarness } from "../../test/api-test-harness.ts";
import { expectDocumentedBody } from "../../test/routes/batch-members.test-support.ts";
import { workerPacingSchema, type WorkerPacingReport } from "./worker-pacing.routes.ts";

/** GET /api/worker/pacing: the pacing of the workers of this process, read when asked. */
let report: WorkerPacingReport = {
  workerId: "worker-01",
  jobStarts: 480,
  waitingToStart: 4,
  startRate: { current: 10, cap: 20 },
  apis: [
    { api: "graph", inFlight: 3, waiting: 0, limit: { current: 4, cap: 8 }, throttledCalls: 12 },
    { api: "exchange", inFlight: 0, waiting: 0, limit: null, throttledCalls: 0 },
  ],
};

let withWorker: ApiHarness;
let without: ApiHarness;

beforeAll(async () => {
  [withWorker, without] = await Promise.all([
    startApiHarness({ workerPacing: () => [report] }),
    startApiHarness(),
  ]);
});

afterAll(async () => {
  await Promise.all([withWorker?.stop(), without?.stop()]);
});

describe("GET /api/worker/pacing", () => {
  it("shows a Reader each worker's start rate, waiting deliveries and calls per API, read at the request", async () => {
    const response = await withWorker.request("GET", "/worker/pacing", { token: withWorker.readerToken });
    expect(response.status, response.text).toBe(200);
    expectDocumentedBody(workerPacingSchema, response.body);
    expect(response.body.workers).toEqual([report]);
    expect(Date.parse(response.body.at)).not.toBeNaN();

    report = { ...report, jobStarts: 500, startRate: { current: 11, cap: 20 } };
    const later = await withWorker.request("GET", "/worker/pacing");
    expect(later.body.workers[0]).toMatchObject({ jobStarts: 500, startRate: { current: 11, cap: 20 } });
  });

  it("lists no worker when this API runs without one", async () => {
    const response = await without.request("GET", "/worker/pacing");
    expect(response.status).toBe(200);
    expect(response.body.workers).toEqual([]);
  });

  it("needs a token", async () => {
    expect((await withWorker.request("GET", "/worker/pacing", { token: null })).status).toBe(401);
  });
});

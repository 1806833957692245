import { describe, expect, it } from "vitest";
import type { WorkerPacing, WorkerPacingReport } from "./pacing-api.ts";
import { pacingLines } from "./pacing-wording.ts";

const worker: WorkerPacingReport = {
  workerId: "worker-01",
  jobStarts: 100,
  waitingToStart: 0,
  startRate: { current: 20, cap: 20 },
  apis: [
    { api: "graph", inFlight: 3, waiting: 0, limit: { current: 8, cap: 8 }, throttledCalls: 0 },
    { api: "exchange", inFlight: 1, waiting: 0, limit: null, throttledCalls: 0 },
  ],
};
const at = (seconds: number, workers: readonly WorkerPacingReport[]): WorkerPacing => ({
  at: new Date(Date.UTC(2026, 10, 27, 9, 0, seconds)).toISOString(),
  workers,
});

/** The batch page's pacing indicator: the observed start rate against the limit, calls per API. */
describe("pacingLines", () => {
  it("counts jobs until a second reading gives the observed rate", () => {
    expect(pacingLines(undefined, at(0, [worker]))).toEqual([
      {
        workerId: "worker-01",
        starts: "100 jobs started · limit 20/s",
        calls: "Graph 3 of 8 at once · Exchange 1 at once",
        lowered: false,
      },
    ]);
    const later = at(2, [{ ...worker, jobStarts: 139, waitingToStart: 4 }]);
    expect(pacingLines(at(0, [worker]), later)[0]!.starts).toBe("20 starts/s · limit 20/s · 4 waiting");
  });

  it("says when the tenant's throttling lowered a limit, and by how much", () => {
    const throttled: WorkerPacingReport = {
      ...worker,
      jobStarts: 110,
      startRate: { current: 9.75, cap: 20 },
      apis: [
        { api: "graph", inFlight: 4, waiting: 2, limit: { current: 4.5, cap: 8 }, throttledCalls: 12 },
        { api: "exchange", inFlight: 0, waiting: 0, limit: { current: 4, cap: 4 }, throttledCalls: 0 },
      ],
    };
    expect(pacingLines(at(0, [worker]), at(2, [throttled]))).toEqual([
      {
        workerId: "worker-01",
        starts: "5 starts/s · limit 9.8 of 20/s, lowered: the tenant throttles",
        calls: "Graph 4 of 4 (cap 8) at once · Exchange 0 of 4 at once",
        lowered: true,
      },
    ]);
  });

  it("reads an unpaced worker as such, and a restarted one as no negative rate", () => {
    const unpaced: WorkerPacingReport = {
      ...worker,
      jobStarts: 3,
      startRate: null,
      apis: worker.apis.map((api) => ({ ...api, limit: null })),
    };
    expect(pacingLines(at(0, [worker]), at(4, [unpaced]))[0]).toEqual({
      workerId: "worker-01",
      starts: "0 starts/s · not paced",
      calls: "Graph 3 at once · Exchange 1 at once",
      lowered: false,
    });
    expect(pacingLines(undefined, at(0, []))).toEqual([]);
  });
});

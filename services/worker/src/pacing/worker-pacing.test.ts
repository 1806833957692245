import { MatoolkitError, reasonCodes, RetryAfterError } from "@matoolkit/domain";
import { describe, expect, it } from "vitest";
import type { TenantClients } from "../tenant/tenant-clients.ts";
import { createManualClock, settle } from "./manual-clock.test-support.ts";
import { createWorkerPacing, MAX_START_WAIT_SECONDS, type PacingSettings } from "./worker-pacing.ts";

const never = new AbortController().signal;

/**
 * Tenant ports whose calls the test answers one by one: each call waits until the test settles
 * it (ok or an error), so the test sees how many are out at once.
 */
function heldTenant() {
  const out = { graph: 0, exchange: 0 };
  const peak = { graph: 0, exchange: 0 };
  const pending: Array<{ api: "graph" | "exchange"; settle: (error?: Error) => void }> = [];
  const hold = (api: "graph" | "exchange") => {
    out[api]++;
    peak[api] = Math.max(peak[api], out[api]);
    return new Promise<never>((resolve, reject) => {
      pending.push({
        api,
        settle: (error) => {
          out[api]--;
          if (error === undefined) resolve(undefined as never);
          else reject(error);
        },
      });
    });
  };
  const clients: TenantClients = {
    graph: { serviceRoot: "https://graph.microsoft.com", request: () => hold("graph") },
    exchange: { invoke: () => hold("exchange") },
  };
  /** Settles the oldest pending call of `api`. */
  const answer = async (api: "graph" | "exchange", error?: Error) => {
    const index = pending.findIndex((call) => call.api === api);
    if (index < 0) throw new Error(`no ${api} call pending`);
    pending.splice(index, 1)[0]!.settle(error);
    await settle();
  };
  return { clients, out, peak, answer, pending };
}

const throttled = (api: "graph" | "exchange") =>
  new RetryAfterError(api === "graph" ? reasonCodes.graphThrottled : reasonCodes.exchangeThrottled, "429", 1);

function setUp(settings: PacingSettings, concurrency = 4) {
  const clock = createManualClock();
  const lowered: string[] = [];
  const pacing = createWorkerPacing({
    settings,
    concurrency,
    clock,
    onLowered: (what, value) => lowered.push(`${what} ${value}`),
  });
  const tenant = heldTenant();
  const paced = pacing.tenant(tenant.clients);
  const graphCall = () =>
    paced.graph.request({ method: "GET", path: "/users" }, never).catch((e: unknown) => e);
  const exchangeCall = () => paced.exchange.invoke("Get-Mailbox", {}, never).catch((e: unknown) => e);
  return { clock, lowered, pacing, tenant, graphCall, exchangeCall };
}

const apiReading = (pacing: ReturnType<typeof createWorkerPacing>, api: "graph" | "exchange") =>
  pacing.reading().apis.find((reading) => reading.api === api)!;

describe("createWorkerPacing", () => {
  it("holds each API to its own in-flight cap", async () => {
    const { tenant, graphCall, exchangeCall, pacing } = setUp({ maxInFlight: { graph: 3, exchange: 1 } });
    const calls = [...Array.from({ length: 7 }, graphCall), ...Array.from({ length: 4 }, exchangeCall)];
    await settle();
    expect(tenant.out).toEqual({ graph: 3, exchange: 1 });
    expect(apiReading(pacing, "graph")).toMatchObject({
      inFlight: 3,
      waiting: 4,
      limit: { current: 3, cap: 3 },
    });
    expect(apiReading(pacing, "exchange")).toMatchObject({ inFlight: 1, waiting: 3 });
    while (tenant.pending.length > 0) await tenant.answer(tenant.pending[0]!.api);
    await Promise.all(calls);
    expect(tenant.peak).toEqual({ graph: 3, exchange: 1 });
    expect(apiReading(pacing, "graph")).toMatchObject({ inFlight: 0, waiting: 0, throttledCalls: 0 });
  });

  it("lowers the job start rate and that API's in-flight limit on a 429, once per storm, then recovers", async () => {
    const { clock, tenant, graphCall, exchangeCall, pacing, lowered } = setUp({
      jobStartsPerSecond: 20,
      maxInFlight: { graph: 8, exchange: 4 },
    });
    const calls = Array.from({ length: 8 }, graphCall);
    calls.push(exchangeCall());
    await settle();
    await clock.advance(500);
    // The storm: all eight Graph calls come back 429; Exchange is fine.
    for (let i = 0; i < 8; i++) await tenant.answer("graph", throttled("graph"));
    await tenant.answer("exchange");
    await Promise.all(calls);
    expect(lowered).toEqual(["graph 4", "job starts 10"]);
    expect(pacing.reading()).toMatchObject({
      startRate: { current: 10, cap: 20 },
      apis: [
        { api: "graph", limit: { current: 4, cap: 8 }, throttledCalls: 8 },
        { api: "exchange", limit: { current: 4, cap: 4 }, throttledCalls: 0 },
      ],
    });
    // Back to the caps additively: half the cap in half of pacingTuning.recoverySeconds (60 s).
    await clock.advance(15_000);
    expect(pacing.reading().startRate).toEqual({ current: 15, cap: 20 });
    expect(apiReading(pacing, "graph").limit).toEqual({ current: 6, cap: 8 });
    await clock.advance(15_000);
    expect(pacing.reading().startRate).toEqual({ current: 20, cap: 20 });
    expect(apiReading(pacing, "graph").limit).toEqual({ current: 8, cap: 8 });
  });

  it("lowers again for a 429 of a call sent at the lowered limit", async () => {
    const { clock, tenant, graphCall, pacing, lowered } = setUp({ jobStartsPerSecond: 16 });
    const first = graphCall();
    await settle();
    await tenant.answer("graph", throttled("graph"));
    await first;
    await clock.advance(1_000);
    const second = graphCall();
    await settle();
    await tenant.answer("graph", throttled("graph"));
    await second;
    expect(lowered).toEqual(["job starts 8", `job starts ${(8 + 16 / 60) / 2}`]);
    expect(pacing.reading().startRate?.current).toBeCloseTo((8 + 16 / 60) / 2, 10);
  });

  it("is not lowered by other errors, which reach the function unchanged", async () => {
    const { tenant, graphCall, pacing, lowered } = setUp({
      jobStartsPerSecond: 5,
      maxInFlight: { graph: 2 },
    });
    const call = graphCall();
    await settle();
    const notFound = new MatoolkitError(reasonCodes.graphNotFound, "404");
    await tenant.answer("graph", notFound);
    expect(await call).toBe(notFound);
    const throttledCall = graphCall();
    await settle();
    const storm = throttled("graph");
    await tenant.answer("graph", storm);
    expect(await throttledCall).toBe(storm);
    expect(lowered).toEqual(["graph 1", "job starts 2.5"]);
    expect(pacing.reading().startRate?.current).toBe(2.5);
  });

  it("keeps the start rate high enough to start every waiting delivery within MAX_START_WAIT_SECONDS", async () => {
    // 64 job slots: the rate never goes below 64 / 60 s, whatever the storm.
    const { tenant, graphCall, pacing } = setUp({ jobStartsPerSecond: 4 }, 64);
    for (let i = 0; i < 10; i++) {
      const call = graphCall();
      await settle();
      await tenant.answer("graph", throttled("graph"));
      await call;
    }
    expect(pacing.reading().startRate?.current).toBe(64 / MAX_START_WAIT_SECONDS);
  });

  it("paces job starts at the rate, and counts calls without holding them when nothing is capped", async () => {
    const { clock, graphCall, tenant, pacing } = setUp({});
    expect(pacing.reading().startRate).toBeNull();
    for (let i = 0; i < 100; i++) await pacing.awaitStart(never);
    const calls = Array.from({ length: 12 }, graphCall);
    await settle();
    expect(apiReading(pacing, "graph")).toEqual({
      api: "graph",
      inFlight: 12,
      waiting: 0,
      limit: null,
      throttledCalls: 0,
    });
    while (tenant.pending.length > 0) await tenant.answer("graph");
    await Promise.all(calls);
    expect(pacing.reading()).toMatchObject({ jobStarts: 100, waitingToStart: 0 });

    const paced = setUp({ jobStartsPerSecond: 2 });
    const started: number[] = [];
    const waits = Array.from({ length: 5 }, () =>
      paced.pacing.awaitStart(never).then(() => started.push(paced.clock.now())),
    );
    await settle();
    expect(paced.pacing.reading().waitingToStart).toBe(4);
    await paced.clock.advance(2_000);
    await Promise.all(waits);
    expect(started).toEqual([0, 500, 1_000, 1_500, 2_000]);
    expect(clock.sleepers).toBe(0);
  });
});

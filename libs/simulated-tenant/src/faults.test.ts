import { describe, expect, it } from "vitest";
import { FaultInjector } from "./faults.ts";

describe("FaultInjector", () => {
  it("fails exactly the armed number of requests to the named API, then lets them through", () => {
    const faults = new FaultInjector({ rate: 0, retryAfterSeconds: 1 });
    faults.arm({ api: "exchange", count: 2, retryAfterSeconds: 7, status: 503 });

    expect(faults.next("graph")).toBeUndefined();
    expect(faults.next("exchange")).toEqual({ status: 503, retryAfterSeconds: 7 });
    expect(faults.next("exchange")).toEqual({ status: 503, retryAfterSeconds: 7 });
    expect(faults.next("exchange")).toBeUndefined();
    expect(faults.counts()).toEqual({ graph: 1, exchange: 3, graphFaults: 0, exchangeFaults: 2 });
  });

  it("throttles at the configured rate with 429 and the configured Retry-After", () => {
    const draws = [0.1, 0.9, 0.29, 0.3];
    const faults = new FaultInjector({ rate: 0.3, retryAfterSeconds: 4, apis: ["graph"] }, () =>
      draws.shift()!,
    );

    const outcomes = [faults.next("graph"), faults.next("graph"), faults.next("graph"), faults.next("graph")];
    expect(outcomes).toEqual([
      { status: 429, retryAfterSeconds: 4 },
      undefined,
      { status: 429, retryAfterSeconds: 4 },
      undefined,
    ]);
    expect(faults.next("exchange")).toBeUndefined();
  });

  it("refuses nonsensical settings", () => {
    expect(() => new FaultInjector({ rate: 1.5, retryAfterSeconds: 1 })).toThrow(/between 0 and 1/);
    expect(() => new FaultInjector({ rate: 0, retryAfterSeconds: 1 }).arm({ count: 0 })).toThrow(/count/);
  });
});

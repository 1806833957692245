import { describe, expect, it } from "vitest";
import { createInFlightGate } from "./in-flight-gate.ts";
import { settle } from "./manual-clock.test-support.ts";

const never = new AbortController().signal;

describe("createInFlightGate", () => {
  it("admits up to the limit and queues the rest in arrival order", async () => {
    const gate = createInFlightGate(() => 2);
    const order: string[] = [];
    const first = await gate.acquire(never);
    const second = await gate.acquire(never);
    const third = gate.acquire(never).then((release) => (order.push("third"), release));
    const fourth = gate.acquire(never).then((release) => (order.push("fourth"), release));
    await settle();
    expect([gate.inFlight, gate.waiting, order]).toEqual([2, 2, []]);

    first();
    first(); // a second call of the same release counts once
    await settle();
    expect([gate.inFlight, gate.waiting, order]).toEqual([2, 1, ["third"]]);
    second();
    await settle();
    expect(order).toEqual(["third", "fourth"]);
    (await third)();
    (await fourth)();
    expect([gate.inFlight, gate.waiting]).toEqual([0, 0]);
  });

  it("follows a lowered limit: calls already out finish, no new one until under it", async () => {
    let limit = 4;
    const gate = createInFlightGate(() => limit);
    const releases = await Promise.all([1, 2, 3, 4].map(() => gate.acquire(never)));
    limit = 2; // throttled: halved
    let admitted = false;
    const next = gate.acquire(never).then((release) => ((admitted = true), release));
    releases[0]!();
    releases[1]!();
    await settle();
    expect([gate.inFlight, admitted]).toEqual([2, false]);
    releases[2]!();
    await settle();
    expect([gate.inFlight, admitted]).toEqual([2, true]);
    releases[3]!();
    (await next)();
    expect(gate.inFlight).toBe(0);
  });

  it("admits more waiters at once when the limit climbed back meanwhile", async () => {
    let limit = 1;
    const gate = createInFlightGate(() => limit);
    const held = await gate.acquire(never);
    const waiters = [gate.acquire(never), gate.acquire(never), gate.acquire(never)];
    limit = 3.7; // floored: 3
    held();
    await settle();
    expect([gate.inFlight, gate.waiting]).toEqual([3, 0]);
    for (const release of await Promise.all(waiters)) release();
  });

  it("always lets one call through, whatever the limit says", async () => {
    const gate = createInFlightGate(() => 0.2);
    const release = await gate.acquire(never);
    expect(gate.inFlight).toBe(1);
    release();
  });

  it("drops a waiter whose signal aborts, with the signal's reason, and keeps the others' order", async () => {
    const gate = createInFlightGate(() => 1);
    const held = await gate.acquire(never);
    const timeout = new AbortController();
    const aborted = gate.acquire(timeout.signal);
    const after = gate.acquire(never);
    timeout.abort(new Error("job timed out"));
    await expect(aborted).rejects.toThrow("job timed out");
    expect(gate.waiting).toBe(1);
    held();
    (await after)();
    expect(gate.inFlight).toBe(0);
    await expect(gate.acquire(timeout.signal)).rejects.toThrow("job timed out");
  });
});

import { describe, expect, it } from "vitest";
import { createAimdLimit } from "./aimd-limit.ts";
import { createManualClock, settle } from "./manual-clock.test-support.ts";
import { createStartPacer } from "./start-pacer.ts";

const never = new AbortController().signal;

/** How many of `times` fall in each window [k·ms, (k+1)·ms). */
function perWindow(times: readonly number[], ms = 1_000): number[] {
  const counts: number[] = [];
  for (const at of times) {
    const window = Math.floor(at / ms);
    counts[window] = (counts[window] ?? 0) + 1;
  }
  return Array.from(counts, (count) => count ?? 0);
}

/** `callers` acquire at once, each acquiring again as soon as it got its turn, for `ms` of the clock. */
async function drive(rate: (now: number) => number, callers: number, ms: number) {
  const clock = createManualClock();
  const starts: number[] = [];
  const pacer = createStartPacer({ rate, clock, onStart: (at) => starts.push(at) });
  let running = true;
  const loops = Array.from({ length: callers }, async () => {
    while (running) await pacer.acquire(never);
  });
  for (let t = 0; t < ms; t += 10) await clock.advance(10);
  running = false;
  pacer.close();
  await Promise.allSettled(loops);
  return { starts, pacer };
}

describe("createStartPacer", () => {
  it("never starts more than the rate in any one-second window, however many callers wait", async () => {
    const { starts } = await drive(() => 20, 50, 10_000);
    // The ten whole seconds driven (a start at exactly 10 s opens an eleventh window).
    const counts = perWindow(starts).slice(0, 10);
    expect(counts).toHaveLength(10);
    expect(Math.max(...counts)).toBe(20);
    // At the cap, not below it: the pacer spaces starts, it does not waste turns.
    expect(Math.min(...counts)).toBeGreaterThanOrEqual(19);
    // Windows that straddle the clock's seconds too: starts are at least 1/rate apart.
    const gaps = starts.slice(1).map((at, i) => at - starts[i]!);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(50);
  });

  it("lets the first caller start at once and the rest wait their turn, first come first served", async () => {
    const clock = createManualClock();
    const pacer = createStartPacer({ rate: () => 2, clock });
    const order: string[] = [];
    const a = pacer.acquire(never).then(() => order.push("a"));
    const b = pacer.acquire(never).then(() => order.push("b"));
    const c = pacer.acquire(never).then(() => order.push("c"));
    await settle();
    expect([order, pacer.waiting]).toEqual([["a"], 2]);
    await clock.advance(499);
    expect(order).toEqual(["a"]);
    await clock.advance(1);
    expect(order).toEqual(["a", "b"]);
    await clock.advance(500);
    await Promise.all([a, b, c]);
    expect([order, pacer.waiting, pacer.started]).toEqual([["a", "b", "c"], 0, 3]);
  });

  it("follows a throttled AIMD rate: halved at once, then back up to the cap", async () => {
    const limit = createAimdLimit({ cap: 10, floor: 1, decreaseFactor: 0.5, increasePerSecond: 1 });
    const clock = createManualClock();
    const starts: number[] = [];
    const pacer = createStartPacer({
      rate: (now) => limit.current(now),
      clock,
      onStart: (at) => starts.push(at),
    });
    let running = true;
    const loops = Array.from({ length: 8 }, async () => {
      while (running) await pacer.acquire(never);
    });
    const second = async () => {
      for (let i = 0; i < 100; i++) await clock.advance(10);
    };
    await second(); // [0 s, 1 s): at the cap
    limit.throttled(clock.now(), clock.now()); // a 429 storm at 1 s: 5/s
    await second();
    for (let i = 0; i < 8; i++) await second(); // recovering: +1/s
    running = false;
    pacer.close();
    await Promise.allSettled(loops);
    const counts = perWindow(starts);
    expect(counts[0]).toBe(10);
    // The start at exactly 1 s went before the storm; then 5/s.
    expect(counts[1]).toBeLessThanOrEqual(6);
    expect(counts[1]).toBeGreaterThanOrEqual(5);
    // Climbing back: each second between the rate at its start (less the turn in progress) and
    // the rate at its end, whole numbers here (5 + s), so the spacing allows no more.
    for (let s = 2; s <= 5; s++) {
      expect(counts[s]).toBeLessThanOrEqual(limit.current((s + 1) * 1_000));
      expect(counts[s]).toBeGreaterThanOrEqual(limit.current(s * 1_000) - 1);
    }
    expect(counts[9]).toBe(10);
  });

  it("hands a waiter back when its signal aborts (the worker stops), without starting it", async () => {
    const clock = createManualClock();
    const pacer = createStartPacer({ rate: () => 1, clock });
    await pacer.acquire(never);
    const stopping = new AbortController();
    const waiting = [pacer.acquire(stopping.signal), pacer.acquire(stopping.signal)];
    await settle();
    expect(pacer.waiting).toBe(2);
    stopping.abort(new Error("worker is stopping"));
    for (const promise of waiting) await expect(promise).rejects.toThrow("worker is stopping");
    expect([pacer.waiting, pacer.started]).toEqual([0, 1]);
    // Its timer went with the last waiter: nothing keeps the process alive.
    await settle();
    expect(clock.sleepers).toBe(0);
    await expect(pacer.acquire(stopping.signal)).rejects.toThrow("worker is stopping");
  });

  it("refuses callers once closed", async () => {
    const clock = createManualClock();
    const pacer = createStartPacer({ rate: () => 1, clock });
    await pacer.acquire(never);
    const waiting = pacer.acquire(never);
    pacer.close();
    await expect(waiting).rejects.toThrow("closed");
    await expect(pacer.acquire(never)).rejects.toThrow("closed");
  });
});

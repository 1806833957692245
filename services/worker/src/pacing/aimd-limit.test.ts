import { describe, expect, it } from "vitest";
import { createAimdLimit, type AimdSettings } from "./aimd-limit.ts";

const settings: AimdSettings = { cap: 20, floor: 2, decreaseFactor: 0.5, increasePerSecond: 1 };

describe("createAimdLimit", () => {
  it("starts at the cap and stays there without throttling", () => {
    const limit = createAimdLimit(settings);
    expect(limit.current(0)).toBe(20);
    expect(limit.current(3_600_000)).toBe(20);
    expect(limit.decreases).toBe(0);
  });

  it("halves on a throttled response, then climbs back by increasePerSecond up to the cap", () => {
    const limit = createAimdLimit(settings);
    expect(limit.throttled(900, 1_000)).toBe(true);
    expect(limit.current(1_000)).toBe(10);
    expect(limit.current(3_000)).toBe(12);
    expect(limit.current(6_500)).toBe(15.5);
    expect(limit.current(11_000)).toBe(20);
    expect(limit.current(60_000)).toBe(20);
  });

  it("counts one decrease per storm: 429s of calls sent before the decrease are ignored", () => {
    const limit = createAimdLimit(settings);
    // Eight calls went out at t=0..700 under the cap; all come back 429 around t=1000.
    expect(limit.throttled(0, 1_000)).toBe(true);
    for (let sentAt = 100; sentAt <= 700; sentAt += 100) expect(limit.throttled(sentAt, 1_050)).toBe(false);
    expect(limit.current(1_050)).toBeCloseTo(10.05, 10);
    expect(limit.decreases).toBe(1);
    // A call sent after the decrease, at the lower value, throttled again: decrease again.
    expect(limit.throttled(1_200, 1_400)).toBe(true);
    expect(limit.current(1_400)).toBeCloseTo((10 + 0.4) / 2, 10);
    expect(limit.decreases).toBe(2);
  });

  it("never goes below the floor, however long the storm", () => {
    const limit = createAimdLimit(settings);
    const lowered = [];
    for (let t = 0; t < 20_000; t += 100) if (limit.throttled(t, t)) lowered.push(t);
    // It reports a decrease only while the value goes down (the worker logs each one), not
    // every 429 of a storm that holds it at the floor.
    expect(lowered.length).toBeLessThan(10);
    expect(limit.current(20_000)).toBeGreaterThanOrEqual(2);
    expect(limit.current(20_000)).toBeLessThan(2.2);
    // ...and recovers from there: 18 more per second-of-increase to the cap.
    expect(limit.current(19_900 + 18_000)).toBe(20);
  });

  it("decreases from the recovered value, not from the cap", () => {
    const limit = createAimdLimit(settings);
    limit.throttled(0, 0); // 10
    expect(limit.throttled(4_000, 4_000)).toBe(true); // recovered to 14, halved to 7
    expect(limit.current(4_000)).toBe(7);
  });

  it.each<[string, Partial<AimdSettings>]>([
    ["cap", { cap: 0 }],
    ["cap", { cap: Number.POSITIVE_INFINITY }],
    ["floor", { floor: 0 }],
    ["floor", { floor: 21 }],
    ["decreaseFactor", { decreaseFactor: 1 }],
    ["decreaseFactor", { decreaseFactor: 0 }],
    ["increasePerSecond", { increasePerSecond: 0 }],
  ])("refuses a bad %s", (name, bad) => {
    expect(() => createAimdLimit({ ...settings, ...bad })).toThrow(name);
  });
});

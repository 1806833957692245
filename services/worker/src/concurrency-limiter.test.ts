import { describe, expect, it } from "vitest";
import { createConcurrencyLimiter } from "./concurrency-limiter.ts";

describe("createConcurrencyLimiter", () => {
  it("never runs more than the limit at once, and runs everything in the end", async () => {
    const limiter = createConcurrencyLimiter(2);
    let running = 0;
    let peak = 0;
    const gates: Array<() => void> = [];
    const task = () =>
      limiter.run(async () => {
        running++;
        peak = Math.max(peak, running);
        await new Promise<void>((resolve) => gates.push(resolve));
        running--;
      });

    const all = Promise.all([task(), task(), task(), task()]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(running).toBe(2);
    while (gates.length > 0 || running > 0) {
      gates.shift()?.();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await all;
    await limiter.idle();
    expect(peak).toBe(2);
  });

  it("frees the slot of a task that throws", async () => {
    const limiter = createConcurrencyLimiter(1);
    await expect(limiter.run(async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    await expect(limiter.run(async () => "next")).resolves.toBe("next");
  });
});

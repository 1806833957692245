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

describe("ConcurrencyLimiter.acquire", () => {
  it("holds its slot until released, once however often release is called", async () => {
    const limiter = createConcurrencyLimiter(1);
    const first = await limiter.acquire();
    let secondHeld = false;
    const second = limiter.acquire().then((slot) => {
      secondHeld = true;
      return slot;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(secondHeld).toBe(false);

    first.release();
    first.release();
    const slot = await second;
    expect(secondHeld).toBe(true);
    // The repeated release of the first slot did not free the second one's.
    let thirdHeld = false;
    void limiter.acquire().then(() => (thirdHeld = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(thirdHeld).toBe(false);
    slot.release();
    await new Promise((resolve) => setImmediate(resolve));
    expect(thirdHeld).toBe(true);
  });

  it("is idle once every slot, acquired or run, is released", async () => {
    const limiter = createConcurrencyLimiter(2);
    const slot = await limiter.acquire();
    let idle = false;
    const running = limiter.run(async () => "done");
    void limiter.idle().then(() => (idle = true));
    await running;
    await new Promise((resolve) => setImmediate(resolve));
    expect(idle).toBe(false);
    slot.release();
    await new Promise((resolve) => setImmediate(resolve));
    expect(idle).toBe(true);
  });
});

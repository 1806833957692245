import { describe, expect, it } from "vitest";
import { withDeadline } from "./deadline.ts";

function abortedWith(signal: AbortSignal): Promise<unknown> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(signal.reason);
    else signal.addEventListener("abort", () => resolve(signal.reason), { once: true });
  });
}

describe("withDeadline", () => {
  it("aborts the operation with a TimeoutError when the deadline passes", async () => {
    const parent = new AbortController();
    const reason = await withDeadline(parent.signal, 20, (signal) => abortedWith(signal));
    expect(reason).toBeInstanceOf(DOMException);
    expect((reason as DOMException).name).toBe("TimeoutError");
  });

  it("fires even when garbage collection runs while the operation waits", async () => {
    const gc = (globalThis as { gc?: () => void }).gc;
    const parent = new AbortController();
    const reason = await withDeadline(parent.signal, 50, async (signal) => {
      const waiting = abortedWith(signal);
      for (let round = 0; round < 5; round += 1) {
        // Churn allocations so a weakly held timer target would be collected.
        Array.from({ length: 50_000 }, (_, index) => ({ index }));
        gc?.();
        await new Promise((resolve) => setImmediate(resolve));
      }
      return waiting;
    });
    expect((reason as DOMException).name).toBe("TimeoutError");
  });

  it("passes on the parent's abort reason", async () => {
    const parent = new AbortController();
    const stop = new Error("job cancelled");
    const reason = await withDeadline(parent.signal, 10_000, (signal) => {
      const waiting = abortedWith(signal);
      parent.abort(stop);
      return waiting;
    });
    expect(reason).toBe(stop);
  });

  it("starts aborted when the parent already is", async () => {
    const parent = new AbortController();
    parent.abort(new Error("already stopped"));
    const aborted = await withDeadline(parent.signal, 10_000, async (signal) => signal.aborted);
    expect(aborted).toBe(true);
  });

  it("leaves no listener on the parent and no abort once the operation is over", async () => {
    const parent = new AbortController();
    let inner: AbortSignal | undefined;
    await withDeadline(parent.signal, 20, async (signal) => {
      inner = signal;
    });
    parent.abort(new Error("later"));
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(inner?.aborted).toBe(false);
  });
});

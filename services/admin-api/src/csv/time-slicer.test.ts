import { performance } from "node:perf_hooks";
import { describe, expect, it } from "vitest";
import { createTimeSlicer } from "./time-slicer.ts";

/**
 * Issue 25, finding 4: heavy requests share the event loop's budget. Three uploads resumed in
 * the same loop turn used to run a slice each before a health probe got its turn.
 */
describe("createTimeSlicer", () => {
  it("resumes one paused worker per loop turn, in turn, so several hold the loop for one slice", async () => {
    const slicer = createTimeSlicer(2);
    const events: string[] = [];
    let probing = true;
    const probe = () => {
      if (!probing) return;
      events.push("|");
      setImmediate(probe);
    };
    const worker = async (name: string) => {
      for (let slice = 0; slice < 4; slice++) {
        events.push(name);
        // A slice of work longer than the budget: every pause yields.
        for (const end = performance.now() + 3; performance.now() < end;);
        await slicer.pause();
      }
    };
    setImmediate(probe);
    await Promise.all(["a", "b", "c"].map(worker));
    probing = false;
    // Before the first turn the three started (each up to its first pause); after it, between two
    // turns of the loop (a probe's "|"), at most one worker ran.
    const [started, ...betweenTurns] = events.join("").split("|");
    expect(started).toBe("abc");
    expect(Math.max(...betweenTurns.map((run) => run.length))).toBe(1);
    expect(events.filter((event) => event !== "|").join("")).toBe("abcabcabcabc");
  });

  it("does not yield before the slice has used its time", async () => {
    const slicer = createTimeSlicer(60_000);
    expect(slicer.pause()).toBeUndefined();
  });
});

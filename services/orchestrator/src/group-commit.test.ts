import { describe, expect, it } from "vitest";
import { createGroupCommit } from "./group-commit.ts";

describe("createGroupCommit", () => {
  it("flushes items submitted during a flush together, and a lone item at once", async () => {
    const flushes: number[][] = [];
    const group = createGroupCommit<number>({
      maxItems: 10,
      flush: async (items) => {
        flushes.push([...items]);
        await new Promise((resolve) => setTimeout(resolve, 20));
      },
    });
    await group.submit(0);
    expect(flushes).toEqual([[0]]);
    await Promise.all(Array.from({ length: 25 }, (_, i) => group.submit(i + 1)));
    // The first of the 25 starts a flush alone; the 24 that arrive meanwhile go in groups of 10.
    expect(flushes.slice(1)).toEqual([
      [1],
      [2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
      [12, 13, 14, 15, 16, 17, 18, 19, 20, 21],
      [22, 23, 24, 25],
    ]);
  });

  it("fails only the item that cannot be processed when its group fails", async () => {
    const committed: number[] = [];
    const group = createGroupCommit<number>({
      maxItems: 10,
      flush: async (items) => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        if (items.includes(3)) throw new Error("item 3 is poison");
        committed.push(...items);
      },
    });
    const outcomes = await Promise.allSettled([1, 2, 3, 4, 5].map((item) => group.submit(item)));
    expect(outcomes.map((outcome) => outcome.status)).toEqual([
      "fulfilled",
      "fulfilled",
      "rejected",
      "fulfilled",
      "fulfilled",
    ]);
    expect(committed.sort()).toEqual([1, 2, 4, 5]);
  });
});

import { describe, expect, it } from "vitest";
import { createGroupCommit } from "./group-commit.ts";

/** A flush the test completes by hand, recording the batches it was given. */
function manualFlush() {
  const batches: number[][] = [];
  const pending: Array<{ resolve(): void; reject(error: Error): void }> = [];
  const flush = (items: readonly number[]) =>
    new Promise<readonly string[]>((resolve, reject) => {
      batches.push([...items]);
      pending.push({ resolve: () => resolve(items.map((item) => `done-${item}`)), reject });
    });
  return { batches, pending, flush };
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe("group commit", () => {
  it("flushes a lone item at the next turn of the event loop, without waiting for company", async () => {
    const { batches, pending, flush } = manualFlush();
    const group = createGroupCommit({ flush, maxBatch: 10 });

    const result = group.submit(1);
    await nextTurn();
    expect(batches).toEqual([[1]]);
    pending[0]!.resolve();
    await expect(result).resolves.toBe("done-1");
  });

  it("flushes the items submitted in one turn together (the jobs of one fetch)", async () => {
    const { batches, pending, flush } = manualFlush();
    const group = createGroupCommit({ flush, maxBatch: 10 });

    const results = [1, 2, 3].map((item) => group.submit(item));
    await nextTurn();
    expect(batches).toEqual([[1, 2, 3]]);
    pending[0]!.resolve();
    await expect(Promise.all(results)).resolves.toEqual(["done-1", "done-2", "done-3"]);
  });

  it("flushes the items that arrived during a flush together, in order, each caller getting its own result", async () => {
    const { batches, pending, flush } = manualFlush();
    const group = createGroupCommit({ flush, maxBatch: 10 });

    const first = group.submit(1);
    await nextTurn();
    const others = [2, 3, 4].map((item) => group.submit(item));
    expect(batches).toEqual([[1]]);
    pending[0]!.resolve();
    await first;
    expect(batches).toEqual([[1], [2, 3, 4]]);
    pending[1]!.resolve();
    await expect(Promise.all(others)).resolves.toEqual(["done-2", "done-3", "done-4"]);
  });

  it("caps a flush at maxBatch items", async () => {
    const batches: number[][] = [];
    const group = createGroupCommit<number, number>({
      maxBatch: 2,
      flush: async (items) => {
        batches.push([...items]);
        await new Promise((resolve) => setImmediate(resolve));
        return items;
      },
    });
    await expect(Promise.all([1, 2, 3, 4, 5].map((item) => group.submit(item)))).resolves.toEqual([
      1, 2, 3, 4, 5,
    ]);
    expect(batches).toEqual([[1, 2], [3, 4], [5]]);
  });

  it("fails every caller of a failed flush, and only those", async () => {
    const { pending, flush } = manualFlush();
    const group = createGroupCommit({ flush, maxBatch: 10 });

    const first = group.submit(1);
    await nextTurn();
    const second = group.submit(2);
    pending[0]!.reject(new Error("database unavailable"));
    await expect(first).rejects.toThrow("database unavailable");
    pending[1]!.resolve();
    await expect(second).resolves.toBe("done-2");
  });

  it("flushes an item submitted by a caller resumed by the last flush (no item is left behind)", async () => {
    let flushes = 0;
    const group = createGroupCommit<number, number>({
      maxBatch: 10,
      flush: async (items) => {
        flushes += 1;
        return items;
      },
    });
    for (let item = 0; item < 5; item += 1) await expect(group.submit(item)).resolves.toBe(item);
    expect(flushes).toBe(5);
    await group.idle();
  });
});

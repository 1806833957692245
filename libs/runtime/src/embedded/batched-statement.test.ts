import { describe, expect, it } from "vitest";
import { createBatchedStatement } from "./batched-statement.ts";

interface Item {
  readonly key: string;
  readonly n: number;
}

/** A statement double that records what it was sent; `refuse` makes `many` fail as the server would. */
function recordingStatement(refuse?: { readonly code: string; readonly badKey?: string }) {
  const calls: { kind: "many" | "one"; keys: string[] }[] = [];
  const fail = (keys: readonly string[]): void => {
    if (refuse === undefined) return;
    if (refuse.badKey === undefined || keys.includes(refuse.badKey)) {
      throw Object.assign(new Error(`refused ${keys.join(",")}`), { code: refuse.code });
    }
  };
  const run = createBatchedStatement<Item, string>({
    maxBatch: 50,
    keyOf: (item) => item.key,
    many: async (items) => {
      await Promise.resolve();
      calls.push({ kind: "many", keys: items.map((item) => item.key) });
      fail(items.map((item) => item.key));
      return items.map((item) => `${item.key}=${item.n}`);
    },
    one: async (item) => {
      await Promise.resolve();
      calls.push({ kind: "one", keys: [item.key] });
      fail([item.key]);
      return `${item.key}=${item.n}`;
    },
  });
  return { run, calls };
}

describe("batched statement", () => {
  it("groups the calls of one turn, runs a lone call alone, and groups the calls made while a statement is in flight", async () => {
    const { run, calls } = recordingStatement();
    const first = await Promise.all(["a", "b"].map((key, n) => run({ key, n })));
    const lone = run({ key: "c", n: 2 });
    await new Promise((resolve) => setImmediate(resolve));
    const meanwhile = ["d", "e", "f"].map((key, n) => run({ key, n: n + 3 }));
    expect([...first, ...(await Promise.all([lone, ...meanwhile]))]).toEqual([
      "a=0",
      "b=1",
      "c=2",
      "d=3",
      "e=4",
      "f=5",
    ]);
    expect(calls).toEqual([
      { kind: "many", keys: ["a", "b"] },
      { kind: "one", keys: ["c"] },
      { kind: "many", keys: ["d", "e", "f"] },
    ]);
  });

  it("never sends one key twice in a statement: the repeat goes in the next one, in order", async () => {
    const { run, calls } = recordingStatement();
    const results = await Promise.all([
      run({ key: "x", n: 0 }),
      run({ key: "k", n: 1 }),
      run({ key: "m", n: 2 }),
      run({ key: "k", n: 3 }),
    ]);
    expect(results).toEqual(["x=0", "k=1", "m=2", "k=3"]);
    expect(calls).toEqual([
      { kind: "many", keys: ["x", "k", "m"] },
      { kind: "one", keys: ["k"] },
    ]);
  });

  it("retries a group the server refused item by item, so only the bad item's caller hears it", async () => {
    const { run, calls } = recordingStatement({ code: "22P05", badKey: "bad" });
    const outcomes = await Promise.allSettled(["a", "b", "bad", "c"].map((key, n) => run({ key, n })));
    expect(outcomes.map((outcome) => outcome.status)).toEqual([
      "fulfilled",
      "fulfilled",
      "rejected",
      "fulfilled",
    ]);
    expect(calls.map((call) => call.kind)).toEqual(["many", "one", "one", "one", "one"]);
  });

  it("fails the whole group at once when the server is unreachable (each caller retries as it would alone)", async () => {
    for (const code of ["ECONNREFUSED", "57P01", "08006"]) {
      const { run, calls } = recordingStatement({ code });
      const outcomes = await Promise.allSettled(["a", "b", "c"].map((key, n) => run({ key, n })));
      expect(outcomes.every((outcome) => outcome.status === "rejected")).toBe(true);
      expect(calls.map((call) => call.kind)).toEqual(["many"]);
    }
  });
});

import { describe, expect, it } from "vitest";
import { ReplicatedCollection } from "./replicated-collection.ts";

interface Item {
  id: string;
  name: string;
}

function collection(delayMs: number) {
  let now = 1_000;
  const items = new ReplicatedCollection<Item>({
    keyOf: (item) => item.id,
    delayMs: () => delayMs,
    now: () => now,
  });
  return { items, advance: (ms: number) => (now += ms) };
}

describe("ReplicatedCollection", () => {
  it("hides a write from replica reads until the delay has passed, but not from the primary", () => {
    const { items, advance } = collection(500);
    items.put({ id: "1", name: "first" });

    expect(items.get("1")).toBeUndefined();
    expect(items.get("1", "primary")).toEqual({ id: "1", name: "first" });
    advance(499);
    expect(items.list()).toEqual([]);
    advance(1);
    expect(items.get("1")).toEqual({ id: "1", name: "first" });
  });

  it("serves the previous version of an update, and still shows a deleted item, until replicated", () => {
    const { items, advance } = collection(100);
    items.seed({ id: "1", name: "old" });
    items.put({ id: "1", name: "new" });
    expect(items.get("1")?.name).toBe("old");
    advance(100);
    expect(items.get("1")?.name).toBe("new");

    items.delete("1");
    expect(items.get("1")?.name).toBe("new");
    expect(items.get("1", "primary")).toBeUndefined();
    advance(100);
    expect(items.find((item) => item.id === "1")).toBeUndefined();
  });

  it("seeds as already replicated and keeps stored values apart from the caller's objects", () => {
    const { items } = collection(60_000);
    const item = { id: "1", name: "seeded" };
    items.seed(item);
    item.name = "mutated by caller";
    const read = items.get("1")!;
    read.name = "mutated reader copy";
    expect(items.get("1")?.name).toBe("seeded");
  });
});

import { describe, expect, it } from "vitest";
import { orderedJobId } from "./ordered-job-id.ts";

describe("orderedJobId", () => {
  it("gives distinct UUID-shaped ids in creation order, past a refill of its random bytes", () => {
    // More ids than the random pool holds (1,024), so a refill happens in the middle.
    const ids = Array.from({ length: 3000 }, () => orderedJobId());

    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
    for (const id of ids)
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$/);
    // The random tail changes from id to id (a pool read at the same offset twice would repeat it).
    const tails = new Set(ids.map((id) => id.slice(-6)));
    expect(tails.size).toBeGreaterThan(ids.length * 0.99);
  });
});

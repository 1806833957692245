import { describe, expect, it } from "vitest";
import { batchesByStartTime } from "./batch-for-start.ts";

const t1 = new Date("2030-06-10T09:00:00Z");
const t2 = new Date("2030-06-11T09:00:00Z");

describe("batchesByStartTime", () => {
  it("maps each start time to its batch, preferring a batch in flight, then the newest", () => {
    const map = batchesByStartTime(
      [
        { id: 1, status: "completed", batchStartTime: t1 },
        { id: 2, status: "active", batchStartTime: t1 },
        { id: 3, status: "cancelled", batchStartTime: t1 },
        { id: 4, status: "failed", batchStartTime: t2 },
        { id: 5, status: "completed", batchStartTime: t2 },
      ],
      { inFlightOnly: false },
    );
    expect(map).toEqual(
      new Map([
        [t1.getTime(), 2],
        // Rows of a finished batch map to it, so they never start it again.
        [t2.getTime(), 5],
      ]),
    );
  });

  it("ignores finished batches when asked for batches in flight only", () => {
    const map = batchesByStartTime(
      [
        { id: 1, status: "completed", batchStartTime: t1 },
        { id: 2, status: "detected", batchStartTime: t2 },
      ],
      { inFlightOnly: true },
    );
    expect(map).toEqual(new Map([[t2.getTime(), 2]]));
  });
});

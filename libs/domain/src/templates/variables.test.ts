import { describe, expect, it } from "vitest";
import { buildTemplateVariables, formatRoundTripUtc } from "./variables.ts";

describe("formatRoundTripUtc", () => {
  it('matches .NET DateTime.ToString("o") for UTC', () => {
    expect(formatRoundTripUtc(new Date("2025-03-15T10:30:00Z"))).toBe("2025-03-15T10:30:00.0000000Z");
    expect(formatRoundTripUtc(new Date("2025-03-15T10:30:00.123Z"))).toBe("2025-03-15T10:30:00.1230000Z");
  });

  it("parses back to the same instant", () => {
    const instant = new Date("2024-12-31T23:59:59.987Z");
    expect(new Date(formatRoundTripUtc(instant)).getTime()).toBe(instant.getTime());
  });

  it("rejects an invalid date instead of producing garbage", () => {
    expect(() => formatRoundTripUtc(new Date("nope"))).toThrow(RangeError);
  });
});

describe("buildTemplateVariables", () => {
  const batchStartTime = new Date("2025-03-15T10:30:00Z");

  it("exposes data columns, worker outputs and the special variables", () => {
    const variables = buildTemplateVariables({
      memberData: { Email: "a@contoso.com", Groups: ["g1"] },
      workerData: { TargetId: "t-1" },
      batchId: 42,
      batchStartTime,
    });
    expect(variables).toEqual({
      Email: "a@contoso.com",
      Groups: ["g1"],
      TargetId: "t-1",
      _batch_id: 42,
      _batch_start_time: "2025-03-15T10:30:00.0000000Z",
    });
  });

  it("lets worker outputs override columns, and special variables override both", () => {
    const variables = buildTemplateVariables({
      memberData: { MailboxId: "old", _batch_id: "column" },
      workerData: { MailboxId: "new", _batch_start_time: "worker" },
      batchId: 7,
      batchStartTime,
    });
    expect(variables.MailboxId).toBe("new");
    expect(variables._batch_id).toBe(7);
    expect(variables._batch_start_time).toBe("2025-03-15T10:30:00.0000000Z");
  });

  it("leaves _batch_start_time out for manual batches (no start time)", () => {
    const variables = buildTemplateVariables({
      memberData: { _batch_start_time: "x" },
      batchId: 1,
      batchStartTime: null,
    });
    expect(Object.hasOwn(variables, "_batch_start_time")).toBe(false);
    expect(variables._batch_id).toBe(1);
  });
});

import { describe, expect, it } from "vitest";
import { nextGroupToStart } from "./dispatch.ts";
import { decideExpansion } from "./step-for-each.ts";

const now = new Date("2030-01-01T00:00:00Z");
const row = (id: number, stepIndex: number, status: string, retryAfter: Date | null = null) => ({
  id,
  stepIndex,
  status,
  retryAfter,
});

describe("nextGroupToStart (issue 30)", () => {
  it("starts a plain step's one pending row, and nothing while it runs or after it failed", () => {
    expect(nextGroupToStart([row(1, 0, "succeeded"), row(2, 1, "pending")], now).map((r) => r.id)).toEqual([
      2,
    ]);
    expect(nextGroupToStart([row(1, 0, "dispatched"), row(2, 1, "pending")], now)).toEqual([]);
    expect(nextGroupToStart([row(1, 0, "failed"), row(2, 1, "pending")], now)).toEqual([]);
    expect(nextGroupToStart([row(1, 0, "succeeded"), row(2, 1, "skipped")], now)).toEqual([]);
  });

  it("starts a for_each step's pending values together, beside values in flight; the next step waits for all", () => {
    const chain = [
      row(1, 0, "succeeded"),
      row(2, 1, "dispatched"),
      row(3, 1, "pending"),
      row(4, 1, "pending"),
      row(5, 2, "pending"),
    ];
    expect(nextGroupToStart(chain, now).map((r) => r.id)).toEqual([3, 4]);
    const waiting = chain.map((r) => (r.stepIndex === 1 && r.id !== 2 ? { ...r, status: "succeeded" } : r));
    expect(nextGroupToStart(waiting, now)).toEqual([]);
    const done = waiting.map((r) => (r.id === 2 ? { ...r, status: "succeeded" } : r));
    expect(nextGroupToStart(done, now).map((r) => r.id)).toEqual([5]);
  });

  it("leaves a value's retry until its retry_after, and a link with a failed or cancelled value alone", () => {
    const later = new Date(now.getTime() + 60_000);
    expect(
      nextGroupToStart([row(1, 0, "pending", later), row(2, 0, "pending", now)], now).map((r) => r.id),
    ).toEqual([2]);
    expect(nextGroupToStart([row(1, 0, "failed"), row(2, 0, "pending")], now)).toEqual([]);
    expect(nextGroupToStart([row(1, 0, "cancelled"), row(2, 0, "pending")], now)).toEqual([]);
  });
});

describe("decideExpansion", () => {
  const clause = { expression: "{{Groups}}", name: "Groups" };

  it("expands an unexpanded for_each step, skips it without values, and runs an expanded or plain one", () => {
    expect(decideExpansion(clause, { itemCount: null }, () => ({ Groups: ["a", "b"] }))).toEqual({
      kind: "expand",
      items: ["a", "b"],
    });
    expect(decideExpansion(clause, { itemCount: null }, () => ({ Groups: [] }))).toEqual({
      kind: "skip",
      reason: "for_each: {{Groups}} has no values",
    });
    const unread = () => {
      throw new Error("an expanded step never reads the list again");
    };
    expect(decideExpansion(clause, { itemCount: 2 }, unread)).toEqual({ kind: "run" });
    expect(decideExpansion(undefined, { itemCount: null }, unread)).toEqual({ kind: "run" });
  });

  it("refuses a list that is not one, with its reason code", () => {
    const verdict = decideExpansion(clause, { itemCount: null }, () => ({ Groups: "a;b" }));
    expect(verdict.kind === "invalid" ? verdict.error.reason : verdict.kind).toBe("for_each.not_a_list");
  });
});

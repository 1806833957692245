import { describe, expect, it } from "vitest";
import { forEachWords } from "./runbook-plan.command.ts";

describe("runbook plan: the FOR EACH column (issue 30)", () => {
  it("says how many executions a for_each step expands to, or why it cannot", () => {
    expect(forEachWords(null)).toBe("");
    expect(forEachWords({ values: 3, problem: null })).toBe("3 value(s)");
    expect(forEachWords({ values: 0, problem: null })).toBe("0 values (skipped)");
    expect(forEachWords({ values: null, problem: null })).toBe("at run time");
    expect(forEachWords({ values: null, problem: "for_each.too_many" })).toBe("for_each.too_many");
  });
});

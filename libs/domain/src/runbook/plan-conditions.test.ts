import { describe, expect, it } from "vitest";
import { parseCondition } from "../conditions/parse.ts";
import type { WhenClause } from "./model.ts";
import { decideWhen } from "./plan-conditions.ts";

function clause(expression: string): WhenClause {
  const parsed = parseCondition(expression);
  if (!parsed.ok) throw new Error(parsed.problem.message);
  const references = [...new Set(parsed.references.map((reference) => reference.name))].sort();
  return { expression, condition: parsed.condition, references };
}

/** TargetUserId is an earlier step's output: known at run time only. */
const atRunTime = (name: string) => name === "TargetUserId";
const data = { Kind: "user", Quota: "lots" };

describe("decideWhen", () => {
  it("decides from the member's data what reads only its data", () => {
    expect(decideWhen([], data, atRunTime)).toBe("always");
    expect(decideWhen([clause("{{Kind}} == 'user'")], data, atRunTime)).toBe("runs");
    expect(decideWhen([clause("{{Kind}} == 'room'")], data, atRunTime)).toBe("skipped");
    expect(decideWhen([clause("{{Quota}} > 5")], data, atRunTime)).toBe("invalid");
  });

  it("leaves for run time a clause reading a run-time name, unless another one skips the step anyway", () => {
    const pending = clause("{{TargetUserId}} is empty");
    expect(decideWhen([pending], data, atRunTime)).toBe("at_run_time");
    expect(decideWhen([pending, clause("{{Kind}} == 'user'")], data, atRunTime)).toBe("at_run_time");
    // False skips whatever the pending clause before it turns out to be.
    expect(decideWhen([pending, clause("{{Kind}} == 'room'")], data, atRunTime)).toBe("skipped");
    // The pending clause may skip the step before the undecidable one is reached.
    expect(decideWhen([pending, clause("{{Quota}} > 5")], data, atRunTime)).toBe("at_run_time");
    // Decided in order, as the orchestrator does: the undecidable one comes first.
    expect(decideWhen([clause("{{Quota}} > 5"), pending], data, atRunTime)).toBe("invalid");
  });
});

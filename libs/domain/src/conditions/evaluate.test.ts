import { describe, expect, it } from "vitest";
import { buildTemplateVariables } from "../templates/variables.ts";
import { ConditionEvaluationError, evaluateCondition } from "./evaluate.ts";
import { parseCondition } from "./parse.ts";

const variables = buildTemplateVariables({
  memberData: {
    HasMailbox: "true",
    Licensed: true,
    Kind: "shared",
    Quota: "50",
    Size: 7,
    Blank: "",
    Manager: null,
    Groups: ["Sales"],
    NoGroups: [],
    MigrationDate: "2026-12-05",
  },
  workerData: { TargetUserId: "0000-1" },
  batchId: 12,
  batchStartTime: null,
});

function decide(text: string, vars: Record<string, unknown> = variables): boolean {
  const result = parseCondition(text);
  if (!result.ok) throw new Error(`${text}: ${result.problem.message}`);
  return evaluateCondition(result.condition, vars);
}

describe("evaluateCondition", () => {
  it("compares with text as a template would read the value", () => {
    expect(decide("{{HasMailbox}} == 'true'")).toBe(true);
    expect(decide("{{Licensed}} == 'true'")).toBe(true);
    expect(decide("{{Size}} == '7'")).toBe(true);
    expect(decide("{{Kind}} != 'user'")).toBe(true);
    expect(decide("{{Groups}} == '[\"Sales\"]'")).toBe(true);
    expect(decide("{{MigrationDate}} < '2027-01-01'")).toBe(true);
  });

  it("reads missing and null values as empty text, for == '' and is empty alike", () => {
    for (const name of ["Blank", "Manager", "NotAColumn"]) {
      expect(decide(`{{${name}}} == ''`)).toBe(true);
      expect(decide(`{{${name}}} is empty`)).toBe(true);
      expect(decide(`{{${name}}} is not empty`)).toBe(false);
    }
    expect(decide("{{TargetUserId}} == ''")).toBe(false);
    expect(decide("{{NoGroups}} is empty")).toBe(true);
    expect(decide("{{Groups}} is empty")).toBe(false);
  });

  it("compares with numbers numerically, numeric text included", () => {
    expect(decide("{{Quota}} > 9")).toBe(true); // as text, "50" < "9"
    expect(decide("{{Quota}} == 50.0")).toBe(true);
    expect(decide("{{Size}} <= 7 and 6 < {{Size}}")).toBe(true);
    expect(decide("{{Kind}} == 1")).toBe(false);
    expect(decide("{{Kind}} != 1")).toBe(true);
  });

  it("compares with true/false as booleans, 'true'/'false' text included", () => {
    expect(decide("{{HasMailbox}} == true")).toBe(true);
    expect(decide("{{Licensed}} == TRUE")).toBe(true);
    expect(decide("{{Kind}} == false")).toBe(false);
    expect(decide("{{Kind}} != false")).toBe(true);
  });

  it("decides in and not in by equality with each listed value", () => {
    expect(decide("{{Kind}} in ['user', 'shared']")).toBe(true);
    expect(decide("{{Kind}} not in ['user', 'shared']")).toBe(false);
    expect(decide("{{Quota}} in [10, 50]")).toBe(true);
    expect(decide("{{Kind}} in [10, 50]")).toBe(false);
  });

  it("compares two references as numbers when both are, else as text", () => {
    expect(decide("{{Quota}} > {{Size}}")).toBe(true);
    expect(decide("{{Quota}} == {{Quota}}")).toBe(true);
    expect(decide("{{Kind}} > {{Quota}}")).toBe(true); // "shared" > "50" as text
    expect(decide("{{Size}} == {{Kind}}")).toBe(false);
  });

  it("applies not, and, or with their usual precedence and stops once decided", () => {
    expect(decide("not {{Kind}} == 'user' and {{Size}} == 7")).toBe(true);
    expect(decide("{{Kind}} == 'user' or {{Size}} == 7 and false")).toBe(false);
    expect(decide("({{Kind}} == 'user' or {{Size}} == 7) and true")).toBe(true);
    // The right side would throw (Kind is not a number): never reached.
    expect(decide("{{Blank}} is not empty and {{Kind}} > 5")).toBe(false);
    expect(decide("{{Blank}} is empty or {{Kind}} > 5")).toBe(true);
  });

  it("throws condition.invalid when a value ordered against a number is not one, naming no value", () => {
    let error: unknown;
    try {
      decide("{{Kind}} > 5");
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConditionEvaluationError);
    expect(error).toMatchObject({
      reason: "condition.invalid",
      message: "{{Kind}} is not a number, so {{Kind}} > 5 cannot be decided",
    });
    expect((error as Error).message).not.toContain("shared");
  });

  it("looks names up as own properties only, and the specials are variables like any other", () => {
    expect(decide("{{constructor}} is empty")).toBe(true);
    expect(decide("{{toString}} == ''")).toBe(true);
    expect(decide("{{_batch_id}} == 12")).toBe(true);
    expect(decide("{{_batch_start_time}} is empty")).toBe(true);
  });
});

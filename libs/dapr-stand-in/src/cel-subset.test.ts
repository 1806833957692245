import { describe, expect, it } from "vitest";
import { CelSyntaxError, compileCel } from "./cel-subset.ts";

const event = {
  type: "WorkAssigned",
  id: "m-1",
  data: { WorkerId: "worker-01", retries: 2, urgent: true, note: null },
};

describe("CEL subset", () => {
  it.each([
    [`event.type == "WorkAssigned"`, true],
    [`event.type == 'WorkAssigned'`, true],
    [`event.data.WorkerId != "worker-02"`, true],
    [`event.data.WorkerId == "worker-01" && event.type == "Other"`, false],
    [`event.type == "Other" || (event.data.retries == 2 && event.data.urgent == true)`, true],
    [`!(event.data.urgent == false)`, true],
    [`!event.data.urgent == false`, true],
    [`event.data.note == null`, true],
    [`has(event.data.WorkerId) && !has(event.data.Missing)`, true],
    [`event.data.retries == "2"`, false],
  ])("%s evaluates to %s", (expression, expected) => {
    expect(compileCel(expression).matches(event)).toEqual({ ok: true, value: expected });
  });

  it("reports a missing field as an evaluation error unless the other side of && / || decides", () => {
    expect(compileCel(`event.data.Missing == "x"`).matches(event)).toEqual({
      ok: false,
      error: "no such key: Missing",
    });
    expect(compileCel(`event.type == "Other" && event.data.Missing == "x"`).matches(event)).toEqual({
      ok: true,
      value: false,
    });
    expect(compileCel(`event.data.Missing == "x" || event.id == "m-1"`).matches(event)).toEqual({
      ok: true,
      value: true,
    });
  });

  it("reports a non-boolean result as an error, as daprd does", () => {
    expect(compileCel("event.type").matches(event)).toEqual({
      ok: false,
      error: expect.stringContaining("not a boolean"),
    });
  });

  it.each([
    ["event.data.retries > 1", "unsupported token"],
    ["event.data.tags[0] == 'a'", "unsupported token"],
    ["size(event.data) == 1", 'function "size" is not supported'],
    ["event.type.startsWith('Work')", "method calls are not supported"],
    ["data.WorkerId == 'x'", 'undeclared reference "data"'],
    ["event.type == 'a' == true", "chained comparisons need parentheses"],
    ["event.type == 'unterminated", "unterminated string literal"],
    ["(event.type == 'a'", 'expected ")"'],
  ])("rejects %s", (expression, reason) => {
    expect(() => compileCel(expression)).toThrow(CelSyntaxError);
    expect(() => compileCel(expression)).toThrow(reason);
  });
});

import { describe, expect, it } from "vitest";
import { parseRunbookOrThrow } from "./parse-runbook.ts";
import { createRunbookPlanner } from "./plan.ts";

const runbook = parseRunbookOrThrow(`
name: plan-for-each
data_source:
  type: csv
  path: members.csv
  primary_key: Upn
  batch_time: immediate
  multi_valued_columns:
    - { name: Groups, format: semicolon_delimited }
phases:
  - name: groups
    offset: T-0
    steps:
      - name: find-licenses
        worker_id: w
        function: Get-Licenses
        output_params: { Skus: skus }
      - name: add-to-group
        worker_id: w
        function: Add-GroupMember
        for_each: "{{Groups}}"
        params: { Group: "{{item}}", User: "{{Upn}}" }
      - name: assign
        worker_id: w
        function: Set-License
        for_each: "{{Skus}}"
        params: { Sku: "{{item}}" }
`);

describe("the plan of a for_each step (issue 30)", () => {
  it("shows how many values each member expands to, or at run time for an output; {{item}} is no unresolved name", () => {
    const planner = createRunbookPlanner(runbook);
    const stepsOf = (data: Record<string, unknown>) => planner.member(data, null)[0]!.steps;

    const [find, add, assign] = stepsOf({
      Upn: "a@x",
      Groups: ["Sales", "Finance", "All"],
      item: "a column",
    });
    expect(find!.forEach).toBeNull();
    expect(add).toMatchObject({
      forEach: { expression: "{{Groups}}", values: 3, problem: null },
      params: { Group: "{{item}}", User: "a@x" },
      unresolved: [],
      resolvedAtRunTime: ["item"],
    });
    expect(assign).toMatchObject({
      forEach: { expression: "{{Skus}}", values: null, problem: null },
      unresolved: [],
      resolvedAtRunTime: ["item"],
    });

    expect(stepsOf({ Upn: "b@x", Groups: [] })[1]!.forEach).toEqual({
      expression: "{{Groups}}",
      values: 0,
      problem: null,
    });
    const many = Array.from({ length: 1001 }, (_, index) => `g${index}`);
    expect(stepsOf({ Upn: "c@x", Groups: many })[1]!.forEach).toEqual({
      expression: "{{Groups}}",
      values: null,
      problem: "for_each.too_many",
    });
  });
});

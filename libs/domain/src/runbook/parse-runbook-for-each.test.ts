import { describe, expect, it } from "vitest";
import {
  forEachValues,
  itemLabel,
  MAX_FOR_EACH_VALUES,
  parseRunbook,
  prepareStepExecution,
} from "./index.ts";

const lines = (...text: string[]) => text.join("\n") + "\n";

const SOURCE = [
  "name: rb",
  "data_source:",
  "  type: csv",
  "  path: members.csv",
  "  primary_key: Upn",
  "  batch_time: immediate",
  "  columns: [Department]",
  "  multi_valued_columns:",
  "    - { name: Groups, format: semicolon_delimited }",
];

/** A step named `name` with `extra` lines (indented as step keys). */
const step = (name: string, ...extra: string[]) => [
  `      - name: ${name}`,
  "        worker_id: w",
  "        function: F",
  ...extra.map((line) => `        ${line}`),
];

function problemsOf(yaml: string): string[] {
  const result = parseRunbook(yaml);
  if (result.ok) throw new Error("expected the runbook to be refused");
  return result.problems.map((p) => `${p.line}:${p.column} ${p.path}: ${p.message}`);
}

describe("parseRunbook: for_each:", () => {
  it("accepts a multi-valued column and an earlier step's output, in this phase or an earlier one", () => {
    const yaml = lines(
      ...SOURCE,
      "phases:",
      "  - name: prepare",
      "    offset: T-1d",
      "    steps:",
      ...step("find", "output_params: { Licenses: skus }"),
      ...step("add", 'for_each: "{{Groups}}"', 'params: { group: "{{item}}", user: "{{Upn}}" }'),
      "  - name: cutover",
      "    offset: T-0",
      "    steps:",
      ...step("license", 'for_each: "{{ Licenses }}"', "when: \"{{Department}} == 'IT'\""),
    );
    const result = parseRunbook(yaml);
    if (!result.ok) throw new Error(result.problems.map((p) => p.message).join("; "));
    const [prepare, cutover] = result.runbook.phases;
    expect(prepare!.steps[0]!.forEach).toBeUndefined();
    expect(prepare!.steps[1]!.forEach).toEqual({ expression: "{{Groups}}", name: "Groups" });
    expect(cutover!.steps[0]!.forEach).toEqual({ expression: "{{ Licenses }}", name: "Licenses" });
    expect(cutover!.steps[0]!.when?.expression).toBe("{{Department}} == 'IT'");
  });

  it("refuses what is not exactly one list known before the step, each at its line:column", () => {
    const yaml = lines(
      ...SOURCE,
      "phases:",
      "  - name: prepare",
      "    offset: T-1d",
      "    steps:",
      ...step("a", 'for_each: "{{Department}}"'),
      ...step("b", 'for_each: "{{Groups}} and more"'),
      ...step("c", 'for_each: "{{Later}}"'),
      ...step("d", 'for_each: "{{Mine}}"', "output_params: { Mine: x }"),
      ...step("e", 'for_each: "{{Nowhere}}"'),
      ...step("f", "output_params: { Later: y }"),
    );
    expect(problemsOf(yaml)).toEqual([
      "17:22 phases[0].steps[0].for_each: {{Department}} is a single-valued column; list it in data_source.multi_valued_columns to run a step per value",
      `21:20 phases[0].steps[1].for_each: for_each must be exactly one {{Name}}: a multi-valued column or an earlier step's output (e.g. "{{Groups}}")`,
      "25:22 phases[0].steps[2].for_each: {{Later}} is neither a multi-valued column nor an output of an earlier step (declare it in data_source.multi_valued_columns; multi-valued columns: Groups)",
      "29:22 phases[0].steps[3].for_each: {{Mine}} is an output of this step: its values are needed before it runs",
      "30:9 phases[0].steps[3].output_params: a for_each step cannot have output_params: its executions (one per value) would overwrite each other's outputs",
      "34:22 phases[0].steps[4].for_each: {{Nowhere}} is neither a multi-valued column nor an output of an earlier step (declare it in data_source.multi_valued_columns; multi-valued columns: Groups)",
    ]);
  });

  it("refuses for_each on init, on_member_removed and rollback steps", () => {
    const yaml = lines(
      ...SOURCE,
      "init:",
      "  - name: i",
      "    worker_id: w",
      "    function: F",
      '    for_each: "{{Groups}}"',
      "phases:",
      "  - name: p",
      "    offset: T-0",
      "    steps:",
      ...step("s"),
    );
    expect(problemsOf(yaml)).toEqual([
      "14:5 init[0].for_each: for_each: is only for phase steps; init steps run once",
    ]);
  });
});

describe("for_each at run time", () => {
  const clause = { expression: "{{Groups}}", name: "Groups" };

  it("reads the member's list; missing or null is no values", () => {
    expect(forEachValues(clause, { Groups: ["a", "b"] })).toEqual({ ok: true, items: ["a", "b"] });
    expect(forEachValues(clause, {})).toEqual({ ok: true, items: [] });
    expect(forEachValues(clause, { Groups: null })).toEqual({ ok: true, items: [] });
  });

  it("refuses a value that is not a list, and more than 1,000 values, naming the list and never a value", () => {
    const text = forEachValues(clause, { Groups: "secret-group" });
    expect(text.ok ? undefined : [text.error.reason, text.error.message]).toEqual([
      "for_each.not_a_list",
      "for_each: {{Groups}} is not a list for this member (a string)",
    ]);
    const many = Array.from({ length: MAX_FOR_EACH_VALUES + 1 }, (_, index) => `g${index}`);
    const tooMany = forEachValues(clause, { Groups: many });
    expect(tooMany.ok ? undefined : [tooMany.error.reason, tooMany.error.message]).toEqual([
      "for_each.too_many",
      "for_each: {{Groups}} has 1001 values; a step expands to at most 1000",
    ]);
    expect(forEachValues(clause, { Groups: many.slice(0, MAX_FOR_EACH_VALUES) }).ok).toBe(true);
  });

  it("labels a value's execution 1-based, and leaves other steps' names alone", () => {
    expect(itemLabel("add", { itemIndex: 1, itemCount: 5 })).toBe("add [2/5]");
    expect(itemLabel("add", { itemIndex: 0, itemCount: null })).toBe("add");
  });

  it("leaves {{item}} for dispatch even when a column shares its name", () => {
    const yaml = lines(
      ...SOURCE,
      "phases:",
      "  - name: p",
      "    offset: T-0",
      "    steps:",
      ...step("add", 'for_each: "{{Groups}}"', 'params: { group: "{{item}}" }'),
      ...step("plain", 'params: { user: "{{Upn}}" }'),
    );
    const result = parseRunbook(yaml);
    if (!result.ok) throw new Error(result.problems.map((p) => p.message).join("; "));
    const [add, plain] = result.runbook.phases[0]!.steps;
    const variables = { Upn: "u@x", item: "column value", Groups: ["g"] };
    expect(prepareStepExecution(add!, 0, result.runbook, variables)).toMatchObject({
      paramsJson: { group: "{{item}}" },
      paramsResolved: false,
    });
    expect(prepareStepExecution(plain!, 1, result.runbook, variables)).toMatchObject({
      paramsJson: { user: "u@x" },
      paramsResolved: true,
    });
  });
});

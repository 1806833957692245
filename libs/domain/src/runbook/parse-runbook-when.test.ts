import { describe, expect, it } from "vitest";
import { parseRunbook } from "./index.ts";

const lines = (...text: string[]) => text.join("\n") + "\n";

const SOURCE = [
  "name: rb",
  "data_source:",
  "  type: csv",
  "  path: members.csv",
  "  primary_key: Upn",
  "  batch_time_column: MigrationDate",
  "  columns: [HasMailbox, Kind]",
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

describe("parseRunbook: when:", () => {
  it("accepts conditions on phases and steps over declared columns, specials and earlier outputs", () => {
    const yaml = lines(
      ...SOURCE,
      "phases:",
      "  - name: prepare",
      "    offset: T-1d",
      "    steps:",
      ...step("find", "output_params: { TargetUserId: UserId }"),
      ...step("create", `when: "{{TargetUserId}} == '' and {{Upn}} is not empty"`),
      "  - name: mailbox",
      "    offset: T-0",
      `    when: "{{HasMailbox}} == 'true'"`,
      "    steps:",
      ...step("move", `when: "{{Kind}} in ['user', 'shared'] or {{TargetUserId}} is empty"`),
      ...step("stamp", `when: "{{_batch_id}} > 0 and {{MigrationDate}} < '2030-01-01'"`),
    );
    const result = parseRunbook(yaml);
    if (!result.ok) throw new Error(result.problems.map((p) => p.message).join("; "));
    const [prepare, mailbox] = result.runbook.phases;
    expect(prepare!.when).toBeUndefined();
    expect(prepare!.steps[0]!.when).toBeUndefined();
    expect(prepare!.steps[1]!.when).toMatchObject({
      expression: "{{TargetUserId}} == '' and {{Upn}} is not empty",
      condition: { kind: "and" },
    });
    expect(mailbox!.when).toMatchObject({
      expression: "{{HasMailbox}} == 'true'",
      condition: { kind: "compare", operator: "==" },
    });
    expect(result.runbook.dataSource.columns).toEqual(["HasMailbox", "Kind"]);
  });

  it("points a syntax problem at its character, in double- and single-quoted and plain values", () => {
    const yaml = lines(
      ...SOURCE,
      "phases:",
      "  - name: p",
      "    offset: T-0",
      "    steps:",
      ...step("a", `when: "{{HasMailbox}} = 'true'"`),
      ...step("b", "when: '{{Kind}} == ''it''''s'' or {{Kind}} === 1'"),
      ...step("c", "when: not {{Kind}} is empy"),
      ...step("d", `when: "{{Kind}} == \\"x\\""`),
    );
    expect(problemsOf(yaml)).toEqual([
      "15:31 phases[0].steps[0].when: unexpected '=': compare with ==",
      // Each '' of the YAML text is one ' of the condition: the === is at column 54, not 50.
      "19:54 phases[0].steps[1].when: unexpected '=': compare with ==",
      "23:31 phases[0].steps[2].when: unknown word 'empy': a column or an output is written {{empy}}, a text 'empy'",
      "27:28 phases[0].steps[3].when: unexpected '\"': text is written in single quotes: 'like this'",
    ]);
  });

  it("refuses a column the data source does not declare, at the reference", () => {
    const yaml = lines(
      ...SOURCE,
      "phases:",
      "  - name: p",
      "    offset: T-0",
      "    steps:",
      ...step("a", `when: "{{Kind}} == 'user' and {{HasMailbx}} == 'true' or {{HasMailbx}} is empty"`),
    );
    expect(problemsOf(yaml)).toEqual([
      "15:39 phases[0].steps[0].when: {{HasMailbx}} is neither a column the data source declares nor an " +
        "output of an earlier step (list the column in data_source.columns; declared: Upn, MigrationDate, " +
        "HasMailbox, Kind)",
    ]);
  });

  it("refuses an output of the step itself, of a later step, or of the phase's own steps in its when", () => {
    const yaml = lines(
      ...SOURCE,
      "phases:",
      "  - name: p",
      "    offset: T-1d",
      `    when: "{{Found}} == 'yes'"`,
      "    steps:",
      ...step("check", `when: "{{TargetUserId}} is empty"`, "output_params: { Found: Found }"),
      ...step("find", `when: "{{TargetUserId}} == 'x'"`, "output_params: { TargetUserId: UserId }"),
      "  - name: q",
      "    offset: T-0",
      `    when: "{{Found}} == 'yes'"`,
      "    steps:",
      ...step("uses-both", `when: "{{Found}} == 'yes' and {{TargetUserId}} is not empty"`),
    );
    expect(problemsOf(yaml)).toEqual([
      '11:12 phases[0].when: {{Found}} is an output of step "check" (phases[0].steps[0]), which does not ' +
        "run before this phase",
      '16:16 phases[0].steps[0].when: {{TargetUserId}} is an output of step "find" (phases[0].steps[1]), ' +
        "which does not run before this step",
      "21:16 phases[0].steps[1].when: {{TargetUserId}} is an output of this step: its condition is " +
        "decided before it runs",
    ]);
  });

  it("refuses when: on init, on_member_removed and rollback steps, at the key", () => {
    const yaml = lines(
      ...SOURCE,
      "init:",
      "  - name: i",
      "    worker_id: w",
      "    function: F",
      `    when: "{{_batch_id}} > 0"`,
      "phases:",
      "  - name: p",
      "    offset: T-0",
      "    steps:",
      ...step("a"),
      "rollbacks:",
      "  undo:",
      "    - name: r",
      "      worker_id: w",
      "      function: F",
      `      when: "{{Kind}} == 'x'"`,
    );
    expect(problemsOf(yaml)).toEqual([
      "12:5 init[0].when: when: is only for phase steps and phases; init steps always run when reached",
      "25:7 rollbacks.undo[0].when: when: is only for phase steps and phases; rollback steps always run " +
        "when reached",
    ]);
  });

  it("points at the start of a block scalar, which it cannot map character by character", () => {
    const yaml = lines(
      ...SOURCE,
      "phases:",
      "  - name: p",
      "    offset: T-0",
      "    steps:",
      ...step("a", "when: >-", "  {{Kind}} == 'x' and", "  {{Nope}} is empty"),
    );
    expect(problemsOf(yaml)).toEqual([
      expect.stringMatching(/^15:15 phases\[0\]\.steps\[0\]\.when: \{\{Nope\}\} is neither a column/),
    ]);
  });
});

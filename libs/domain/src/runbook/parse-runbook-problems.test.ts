import { describe, expect, it } from "vitest";
import type { RunbookProblem } from "./index.ts";
import { MAX_NAME_LENGTH, parseRunbook } from "./index.ts";

const lines = (...text: string[]) => text.join("\n") + "\n";

function problemsOf(yamlText: string): RunbookProblem[] {
  const result = parseRunbook(yamlText);
  if (result.ok) throw new Error("expected the runbook to be rejected");
  return result.problems;
}

const DATA_SOURCE = [
  "data_source:",
  "  type: dataverse",
  "  connection: DATAVERSE_URL",
  "  query: SELECT 1",
  "  primary_key: Email",
  "  batch_time_column: Start",
];

/** A valid runbook whose phase step list is `steps` (indented for `phases[0].steps`). */
const withSteps = (...steps: string[]) =>
  lines("name: rb", ...DATA_SOURCE, "phases:", "  - name: p", "    offset: T-0", "    steps:", ...steps);

describe("parseRunbook: every problem in one pass, with line:column", () => {
  it("reports exactly the three mistakes of a runbook, sorted by position", () => {
    const text = lines(
      "name: bad", // 1
      ...DATA_SOURCE, // 2-7
      "phases:", // 8
      "  - name: prepare", // 9
      "    offset: T+1h", // 10
      "    steps:", // 11
      "      - name: one", // 12
      "        worker_id: w", // 13
      "        function: F", // 14
      "        on_failure: undo-everything", // 15
      "      - name: one", // 16
      "        worker_id: w",
      "        function: G",
      "rollbacks:",
      "  undo-mailbox:",
      "    - name: r",
      "      worker_id: w",
      "      function: R",
    );
    expect(problemsOf(text)).toEqual([
      {
        path: "phases[0].offset",
        line: 10,
        column: 13,
        message: 'invalid offset "T+1h": expected T-<n><d|h|m|s> or T-0',
      },
      {
        path: "phases[0].steps[0].on_failure",
        line: 15,
        column: 21,
        message: 'on_failure "undo-everything" does not name a rollback; defined rollbacks: undo-mailbox',
      },
      {
        path: "phases[0].steps[1].name",
        line: 16,
        column: 15,
        message: 'duplicate step name "one" (already used at phases[0].steps[0])',
      },
    ]);
  });

  it("points a missing field at its parent mapping and names the field", () => {
    const text = lines(
      "description: no name", // 1
      "data_source:", // 2
      "  type: csv", // 3
      "  path: m.csv", // 4
      "  batch_time: immediate", // 5
      "phases:", // 6
      "  - name: p", // 7
      "    offset: T-0", // 8
      "    steps:", // 9
      "      - name: s", // 10
      "        function: F", // 11
    );
    expect(problemsOf(text)).toEqual([
      { path: "name", line: 1, column: 1, message: 'missing required field "name"' },
      {
        path: "data_source.primary_key",
        line: 3,
        column: 3,
        message: 'missing required field "primary_key"',
      },
      {
        path: "phases[0].steps[0].worker_id",
        line: 10,
        column: 9,
        message: 'missing required field "worker_id"',
      },
    ]);
  });

  it("reports wrong types with what was expected", () => {
    const problems = problemsOf(
      withSteps(
        "      - name: 5", // 12
        "        worker_id: [a]", // 13
        "        function: F", // 14
        "        params: [1, 2]", // 15
        "        output_params: { Id: 7 }", // 16
        "        retry: { max_retries: 1.5, interval: 1m }", // 17
      ),
    );
    expect(problems.map((p) => [p.line, p.path, p.message])).toEqual([
      [12, "phases[0].steps[0].name", "expected a string, got number 5"],
      [13, "phases[0].steps[0].worker_id", "expected a string, got a list"],
      [15, "phases[0].steps[0].params", "expected a mapping, got a list"],
      [16, "phases[0].steps[0].output_params.Id", "expected a string, got number 7"],
      [17, "phases[0].steps[0].retry.max_retries", "expected an integer, got number 1.5"],
    ]);
  });

  it("rejects unknown keys at the key, listing the allowed keys (typos are never ignored)", () => {
    const problems = problemsOf(
      withSteps(
        "      - name: s", // 12
        "        worker_id: w", // 13
        "        function: F", // 14
        "        poll:", // 15
        "          interval: 15m", // 16
        "          timeout: 24h", // 17
        "          poll_intervl: 5m", // 18
      ),
    );
    expect(problems).toEqual([
      {
        path: "phases[0].steps[0].poll.poll_intervl",
        line: 18,
        column: 11,
        message: 'unknown key "poll_intervl"; allowed keys: interval, timeout',
      },
    ]);
  });

  it("lists the allowed data source types", () => {
    const text = lines(
      "name: rb",
      "data_source:",
      "  type: oracle",
      "  primary_key: Id",
      "  batch_time: immediate",
    );
    expect(problemsOf(text)).toContainEqual({
      path: "data_source.type",
      line: 3,
      column: 9,
      message: 'invalid value "oracle"; allowed values: dataverse, databricks, postgres, csv',
    });
  });

  it("reports a YAML syntax error with its position", () => {
    const problems = problemsOf(lines("name: rb", "phases:", "  - name: [unclosed", "other: 1"));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ path: "", line: 4, column: 1 });
    expect(problems[0]?.message).toMatch(/^YAML syntax error: /);
  });

  it("reports duplicate YAML keys (e.g. two rollbacks with one name)", () => {
    const problems = problemsOf(lines("name: rb", "name: again"));
    expect(problems).toEqual([expect.objectContaining({ line: 2, column: 1 })]);
    expect(problems[0]?.message).toMatch(/unique/);
  });

  it("rejects an empty document as not being a mapping", () => {
    expect(problemsOf("")).toEqual([
      { path: "", line: 1, column: 1, message: "expected a mapping, got null" },
    ]);
  });
});

describe("a structure that contains itself", () => {
  it("is a problem, not a crash (found by the admin API fuzz test)", () => {
    const result = parseRunbook("name: x\ndata_source: &a\n  self: *a\nphases: &b [*b]\n");
    expect(result).toEqual({
      ok: false,
      problems: [
        {
          path: "",
          line: 1,
          column: 1,
          message: "YAML error: an alias refers to its own anchor (a structure that contains itself)",
        },
      ],
    });
  });
});

describe("text the database cannot store", () => {
  it("is reported where a YAML escape put it (a 500 at publish before; found by the fuzz test)", () => {
    const result = parseRunbook('name: "a\\u0000b"\ndescription: "\\ud800"\n');
    expect(result.ok).toBe(false);
    const problems = result.ok ? [] : result.problems.filter((problem) => problem.message.includes("NUL"));
    expect(problems.map(({ path, line, column }) => ({ path, line, column }))).toEqual([
      { path: "name", line: 1, column: 7 },
      { path: "description", line: 2, column: 14 },
    ]);
  });
});

describe("names longer than a database index can hold", () => {
  it("are refused at their line with the limit (a 500 at publish before; found by the fuzz test)", () => {
    const yaml = (name: string, step: string) =>
      `name: ${name}\ndata_source:\n  type: csv\n  path: m.csv\n  primary_key: Upn\n  batch_time: immediate\nphases:\n  - name: go\n    offset: T-0\n    steps:\n      - name: ${step}\n        worker_id: worker-01\n        function: Test-Echo\n`;
    const long = "x".repeat(MAX_NAME_LENGTH + 1);
    const result = parseRunbook(yaml(long, long));
    expect(result.ok).toBe(false);
    const problems = result.ok
      ? []
      : result.problems.filter((problem) => problem.message.includes("at most"));
    expect(problems.map(({ path, line }) => ({ path, line }))).toEqual([
      { path: "name", line: 1 },
      { path: "phases[0].steps[0].name", line: 11 },
    ]);
    expect(parseRunbook(yaml("x".repeat(MAX_NAME_LENGTH), "step")).ok).toBe(true);
  });
});

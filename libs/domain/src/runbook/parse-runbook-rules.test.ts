import { describe, expect, it } from "vitest";
import { parseRunbook } from "./index.ts";

const lines = (...text: string[]) => text.join("\n") + "\n";

/** path → message, which is what these rule tests care about (positions are covered elsewhere). */
function problemMap(yamlText: string): Record<string, string> {
  const result = parseRunbook(yamlText);
  if (result.ok) throw new Error("expected the runbook to be rejected");
  return Object.fromEntries(result.problems.map((p) => [p.path, p.message]));
}

const STEP = ["      - name: s", "        worker_id: w", "        function: F"];
const PHASES = ["phases:", "  - name: p", "    offset: T-0", "    steps:", ...STEP];
const SOURCE = [
  "data_source:",
  "  type: postgres",
  "  query: SELECT 1",
  "  primary_key: id",
  "  batch_time: immediate",
];

describe("parseRunbook: data_source rules", () => {
  it("requires exactly one of batch_time_column or batch_time: immediate", () => {
    const neither = ["data_source:", "  type: postgres", "  query: q", "  primary_key: id"];
    expect(problemMap(lines("name: rb", ...neither, ...PHASES))).toEqual({
      "data_source.batch_time_column":
        'missing batch timing: set exactly one of batch_time_column or "batch_time: immediate"',
    });
    const both = [...neither, "  batch_time_column: Start", "  batch_time: immediate"];
    expect(problemMap(lines("name: rb", ...both, ...PHASES))).toEqual({
      "data_source.batch_time": "batch_time_column and batch_time are mutually exclusive; set exactly one",
    });
  });

  it("requires the location fields of each source type and rejects ones it would ignore", () => {
    const databricks = [
      "data_source:",
      "  type: databricks",
      "  primary_key: id",
      "  batch_time: immediate",
      "  path: x.csv",
    ];
    expect(problemMap(lines("name: rb", ...databricks, ...PHASES))).toEqual({
      "data_source.connection": 'missing required field "connection" (required for type databricks)',
      "data_source.warehouse_id": 'missing required field "warehouse_id" (required for type databricks)',
      "data_source.query": 'missing required field "query" (required for type databricks)',
      "data_source.path":
        '"path" is not used by type databricks; fields for databricks: connection, warehouse_id, query',
    });
    const dataverse = [
      "data_source:",
      "  type: dataverse",
      "  query: q",
      "  primary_key: id",
      "  batch_time: immediate",
    ];
    expect(problemMap(lines("name: rb", ...dataverse, ...PHASES))).toEqual({
      "data_source.connection": 'missing required field "connection" (required for type dataverse)',
    });
  });
});

describe("parseRunbook: phase and step rules", () => {
  it("requires at least one phase and at least one step per phase", () => {
    expect(problemMap(lines("name: rb", ...SOURCE, "phases: []"))).toEqual({
      phases: "at least one phase is required",
    });
    const empty = ["phases:", "  - name: p", "    offset: T-0", "    steps: []"];
    expect(problemMap(lines("name: rb", ...SOURCE, ...empty))).toEqual({
      "phases[0].steps": "a phase needs at least one step",
    });
  });

  it("rejects duplicate phase names and duplicate step names within init, on_member_removed and a rollback", () => {
    const step = (name: string) => [`  - name: ${name}`, "    worker_id: w", "    function: F"];
    const text = lines(
      "name: rb",
      ...SOURCE,
      ...PHASES,
      "  - name: p",
      "    offset: T-1h",
      "    steps:",
      ...STEP,
      "init:",
      ...step("i"),
      ...step("i"),
      "on_member_removed:",
      ...step("m"),
      ...step("m"),
      "rollbacks:",
      "  undo:",
      ...step("r").map((line) => `  ${line}`),
      ...step("r").map((line) => `  ${line}`),
    );
    expect(problemMap(text)).toEqual({
      "phases[1].name": 'duplicate phase name "p" (already used at phases[0])',
      "init[1].name": 'duplicate step name "i" (already used at init[0])',
      "on_member_removed[1].name": 'duplicate step name "m" (already used at on_member_removed[0])',
      "rollbacks.undo[1].name": 'duplicate step name "r" (already used at rollbacks.undo[0])',
    });
  });

  it("allows the same step name in different lists", () => {
    const text = lines(
      "name: rb",
      ...SOURCE,
      ...PHASES,
      "on_member_removed:",
      "  - { name: s, worker_id: w, function: F }",
    );
    expect(parseRunbook(text).ok).toBe(true);
  });

  it("validates durations and that a poll timeout is not shorter than its interval", () => {
    const text = lines(
      "name: rb",
      ...SOURCE,
      ...PHASES,
      "        poll: { interval: 15m, timeout: 1m }",
      "        timeout: 10",
      "      - name: t",
      "        worker_id: w",
      "        function: F",
      "        poll: { interval: 0s, timeout: 1h }",
      "        retry: { max_retries: 2, interval: soon }",
    );
    expect(problemMap(text)).toEqual({
      "phases[0].steps[0].poll.timeout": "poll timeout (1m) is shorter than poll interval (15m)",
      "phases[0].steps[0].timeout":
        'invalid duration "10": expected <n><d|h|m|s> with n a positive integer (e.g. 30s, 15m, 24h, 7d)',
      "phases[0].steps[1].poll.interval":
        'invalid duration "0s": duration must be positive; expected <n><d|h|m|s> with n a positive integer (e.g. 30s, 15m, 24h, 7d)',
      "phases[0].steps[1].retry.interval":
        'invalid duration "soon": expected <n><d|h|m|s> with n a positive integer (e.g. 30s, 15m, 24h, 7d)',
    });
  });

  it("requires max_retries to be an integer >= 0 and an interval unless retry is disabled", () => {
    const text = lines(
      "name: rb",
      ...SOURCE,
      "retry: { max_retries: 2 }",
      ...PHASES,
      "        retry: { max_retries: -1 }",
    );
    expect(problemMap(text)).toEqual({
      "retry.interval": 'missing required field "interval" (required when max_retries > 0)',
      "phases[0].steps[0].retry.max_retries": "max_retries must be an integer >= 0 (0 disables retry)",
    });
  });

  it("says when on_failure is used but no rollbacks are defined", () => {
    const text = lines("name: rb", ...SOURCE, ...PHASES, "        on_failure: undo");
    expect(problemMap(text)).toEqual({
      "phases[0].steps[0].on_failure": 'on_failure "undo" does not name a rollback; no rollbacks are defined',
    });
  });

  it("flags per-member variables in init steps, which only get _batch_id and _batch_start_time", () => {
    const text = lines(
      "name: rb",
      ...SOURCE,
      ...PHASES,
      "init:",
      "  - name: i",
      "    worker_id: w",
      '    function: "New-{{ObjectType}}"',
      "    params:",
      '      Batch: "{{_batch_id}} at {{ _batch_start_time }}"',
      '      Nested: { List: ["{{Email}}", "{{_batch_id}}"] }',
    );
    expect(problemMap(text)).toEqual({
      "init[0].function":
        "init steps may only use {{_batch_id}} and {{_batch_start_time}}; found {{ObjectType}}",
      "init[0].params.Nested.List[0]":
        "init steps may only use {{_batch_id}} and {{_batch_start_time}}; found {{Email}}",
    });
  });
});

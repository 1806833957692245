import { describe, expect, it } from "vitest";
import { parseRunbook, type RunbookProblem } from "./index.ts";

/** `approval: required` on a phase, with its optional timeout and outcome (issue 30). */
const lines = (...text: string[]) => text.join("\n") + "\n";

const HEAD = [
  "name: rb", // 1
  "data_source:", // 2
  "  type: csv", // 3
  "  path: m.csv", // 4
  "  primary_key: id", // 5
  "  batch_time: immediate", // 6
  "phases:", // 7
  "  - name: cutover", // 8
  "    offset: T-0", // 9
];
const STEPS = ["    steps:", "      - name: s", "        worker_id: w", "        function: F"];

/** A runbook whose one phase carries `keys` (lines 10…), then its steps. */
const phaseWith = (...keys: string[]) => lines(...HEAD, ...keys, ...STEPS);

function problemsOf(yamlText: string): RunbookProblem[] {
  const result = parseRunbook(yamlText);
  if (result.ok) throw new Error("expected the runbook to be rejected");
  return result.problems;
}

describe("parseRunbook: approval gates on phases", () => {
  it("reads approval: required with no timeout: the phase waits for as long as it takes", () => {
    const result = parseRunbook(phaseWith("    approval: required"));
    expect(result.ok && result.runbook.phases[0]!.approval).toEqual({ timeoutOutcome: "reject" });
  });

  it("reads the timeout and its outcome; the outcome defaults to reject", () => {
    const approve = parseRunbook(
      phaseWith(
        "    approval: required",
        "    approval_timeout: 4h",
        "    approval_timeout_outcome: approve",
      ),
    );
    expect(approve.ok && approve.runbook.phases[0]!.approval).toEqual({
      timeoutSeconds: 14_400,
      timeoutOutcome: "approve",
    });
    const byDefault = parseRunbook(phaseWith("    approval: required", "    approval_timeout: 30m"));
    expect(byDefault.ok && byDefault.runbook.phases[0]!.approval).toEqual({
      timeoutSeconds: 1_800,
      timeoutOutcome: "reject",
    });
  });

  it("leaves a phase without the key ungated", () => {
    const result = parseRunbook(phaseWith());
    expect(result.ok).toBe(true);
    expect(result.ok && "approval" in result.runbook.phases[0]!).toBe(false);
  });

  it("refuses a wrong value of each key at its line and column", () => {
    expect(
      problemsOf(
        phaseWith("    approval: yes", "    approval_timeout: 10", "    approval_timeout_outcome: maybe"),
      ),
    ).toEqual([
      {
        path: "phases[0].approval",
        line: 10,
        column: 15,
        message: 'invalid value "yes"; allowed values: required',
      },
      {
        path: "phases[0].approval_timeout",
        line: 11,
        column: 23,
        message:
          'invalid duration "10": expected <n><d|h|m|s> with n a positive integer (e.g. 30s, 15m, 24h, 7d)',
      },
      {
        path: "phases[0].approval_timeout_outcome",
        line: 12,
        column: 31,
        message: 'invalid value "maybe"; allowed values: approve, reject',
      },
    ]);
  });

  it("refuses a zero timeout", () => {
    const [problem] = problemsOf(phaseWith("    approval: required", "    approval_timeout: 0s"));
    expect(problem).toMatchObject({ path: "phases[0].approval_timeout", line: 11, column: 23 });
    expect(problem!.message).toMatch(/duration must be positive/);
  });

  it("refuses a timeout without a gate, and an outcome without a timeout, rather than ignore them", () => {
    expect(problemsOf(phaseWith("    approval_timeout: 1h"))).toEqual([
      {
        path: "phases[0].approval_timeout",
        line: 10,
        column: 23,
        message: 'approval_timeout needs "approval: required" on the same phase',
      },
    ]);
    expect(problemsOf(phaseWith("    approval: required", "    approval_timeout_outcome: approve"))).toEqual([
      {
        path: "phases[0].approval_timeout_outcome",
        line: 11,
        column: 31,
        message:
          "approval_timeout_outcome needs approval_timeout on the same phase (without a timeout the phase waits for a decision)",
      },
    ]);
  });

  it("names the approval keys among a phase's allowed keys when one is misspelt", () => {
    const [problem] = problemsOf(phaseWith("    aproval: required"));
    expect(problem).toMatchObject({ path: "phases[0].aproval", line: 10, column: 5 });
    expect(problem!.message).toMatch(/approval, approval_timeout, approval_timeout_outcome/);
  });
});

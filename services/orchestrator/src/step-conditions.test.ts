import { parseRunbookOrThrow } from "@matoolkit/domain";
import { describe, expect, it } from "vitest";
import { clausesOf, decideStep } from "./step-conditions.ts";

const runbook = parseRunbookOrThrow(`
name: conditions
data_source:
  type: csv
  path: members.csv
  primary_key: Upn
  batch_time: immediate
  columns: [Kind, Quota]
phases:
  - name: mailbox
    offset: T-0
    when: "{{Kind}} != 'room'"
    steps:
      - name: move
        worker_id: w
        function: F
        when: "{{Quota}} > 5"
      - name: stamp
        worker_id: w
        function: F
`);

const decide = (stepIndex: number, stepName: string, data: Record<string, unknown>, retryCount = 0) =>
  decideStep(clausesOf(runbook, "mailbox", { stepIndex, stepName }), { retryCount }, () => data);

describe("decideStep", () => {
  it("runs a step when its phase's clause and its own hold, naming the first false one otherwise", () => {
    expect(decide(0, "move", { Kind: "user", Quota: "9" })).toEqual({ kind: "run" });
    expect(decide(0, "move", { Kind: "room", Quota: "9" })).toEqual({
      kind: "skip",
      reason: "phase when: {{Kind}} != 'room' is false",
    });
    expect(decide(0, "move", { Kind: "user", Quota: "1" })).toEqual({
      kind: "skip",
      reason: "when: {{Quota}} > 5 is false",
    });
    // The phase's clause applies to a step without one of its own.
    expect(decide(1, "stamp", { Kind: "room" })).toMatchObject({ kind: "skip" });
  });

  it("answers invalid when a clause cannot be decided, and decides nothing on a retry", () => {
    const invalid = decide(0, "move", { Kind: "user", Quota: "lots" });
    expect(invalid.kind).toBe("invalid");
    expect(invalid.kind === "invalid" && invalid.error.reason).toBe("condition.invalid");
    // A retry re-sends a step whose condition held: it never becomes a skip or a failure.
    expect(decide(0, "move", { Kind: "room", Quota: "lots" }, 1)).toEqual({ kind: "run" });
  });

  it("finds no clause for a step the runbook version does not have at that index, nor for another phase", () => {
    expect(clausesOf(runbook, "mailbox", { stepIndex: 0, stepName: "renamed" })).toHaveLength(1);
    expect(clausesOf(runbook, "mailbox", { stepIndex: 7, stepName: "move" })).toHaveLength(1);
    expect(clausesOf(runbook, "gone", { stepIndex: 0, stepName: "move" })).toEqual([]);
  });
});

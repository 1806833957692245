import { describe, expect, it } from "vitest";
import { parseRunbook, parseRunbookOrThrow } from "./index.ts";

/** Issue 25: the explicit secret markers of a runbook, and the clear errors for a bad one. */
const lines = (...text: string[]) => text.join("\n") + "\n";

function runbookWith(options: { source?: string[]; step?: string[] }): string {
  return lines(
    "name: rb",
    "data_source:",
    "  type: csv",
    "  path: members.csv",
    "  primary_key: UserPrincipalName",
    "  batch_time: immediate",
    ...(options.source ?? []),
    "phases:",
    "  - name: p",
    "    offset: T-0",
    "    steps:",
    "      - name: s",
    "        worker_id: w",
    "        function: F",
    "        params:",
    '          Upn: "{{UserPrincipalName}}"',
    '          Args: "-code {{Pin}}"',
    ...(options.step ?? []),
  );
}

function problemMap(yamlText: string): Record<string, string> {
  const result = parseRunbook(yamlText);
  if (result.ok) throw new Error("expected the runbook to be rejected");
  return Object.fromEntries(result.problems.map((p) => [p.path, p.message]));
}

describe("secret markers", () => {
  it("reads secret_columns and secret_params into the model", () => {
    const runbook = parseRunbookOrThrow(
      runbookWith({ source: ["  secret_columns: [Badge]"], step: ["        secret_params: [Args]"] }),
    );
    expect(runbook.dataSource.secretColumns).toEqual(["Badge"]);
    expect(runbook.phases[0]!.steps[0]!.secretParams).toEqual(["Args"]);
  });

  it("refuses a marker that is not a list of names", () => {
    expect(problemMap(runbookWith({ source: ["  secret_columns: Badge"] }))).toEqual({
      "data_source.secret_columns": "expected a list, got a string",
    });
    expect(problemMap(runbookWith({ step: ["        secret_params: true"] }))).toEqual({
      "phases[0].steps[0].secret_params": "expected a list, got boolean true",
    });
    expect(problemMap(runbookWith({ source: ['  secret_columns: [""]'] }))).toEqual({
      "data_source.secret_columns[0]": "must not be empty",
    });
  });

  it("refuses a secret param the step does not have, naming the ones it has", () => {
    expect(problemMap(runbookWith({ step: ["        secret_params: [Argz]"] }))).toEqual({
      "phases[0].steps[0].secret_params[0]":
        'secret_params names "Argz", not a param of this step; its params: Upn, Args',
    });
  });

  it("refuses the primary key as a secret column, and duplicates", () => {
    expect(
      problemMap(runbookWith({ source: ["  secret_columns: [Badge, UserPrincipalName, Badge]"] })),
    ).toEqual({
      "data_source.secret_columns[1]":
        'the primary key "UserPrincipalName" cannot be a secret column: its value is the member key that every read shows to identify the member',
      "data_source.secret_columns[2]": 'duplicate secret column "Badge"',
    });
  });
});

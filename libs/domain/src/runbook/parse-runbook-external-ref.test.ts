import { describe, expect, it } from "vitest";
import { parseRunbook } from "./index.ts";

const lines = (...text: string[]) => text.join("\n") + "\n";
const PHASES = [
  "phases:",
  "  - name: p",
  "    offset: T-0",
  "    steps:",
  "      - name: s",
  "        worker_id: w",
  "        function: F",
];

function runbookWith(...sourceExtra: string[]): string {
  return lines(
    "name: rb",
    "data_source:",
    "  type: postgres",
    "  query: SELECT 1",
    "  primary_key: Upn",
    "  batch_time: immediate",
    ...sourceExtra,
    ...PHASES,
  );
}

describe("parseRunbook: data_source.external_ref_column (issue 31)", () => {
  it("reads the column into the model", () => {
    const result = parseRunbook(runbookWith("  external_ref_column: TicketId"));
    expect(result.ok && result.runbook.dataSource.externalRefColumn).toBe("TicketId");
  });

  it("leaves it out when absent", () => {
    const result = parseRunbook(runbookWith());
    expect(result.ok && "externalRefColumn" in result.runbook.dataSource).toBe(false);
  });

  it.each([
    ["the primary key", "Upn", [], 'external_ref_column cannot be the primary key "Upn"'],
    [
      "a secret column",
      "Badge",
      ["  secret_columns: [Badge]"],
      'external_ref_column "Badge" is a secret column',
    ],
    ["a secret-looking name", "ApiToken", [], 'external_ref_column "ApiToken" looks secret by its name'],
    [
      "a multi-valued column",
      "Tickets",
      ["  multi_valued_columns:", "    - name: Tickets", "      format: semicolon_delimited"],
      'external_ref_column "Tickets" is a multi-valued column',
    ],
  ])("refuses %s at the column's line and column", (_what, column, extra, message) => {
    const result = parseRunbook(runbookWith(...extra, `  external_ref_column: ${column}`));
    if (result.ok) throw new Error("expected the runbook to be refused");
    const [problem] = result.problems;
    expect(result.problems).toHaveLength(1);
    expect(problem!.path).toBe("data_source.external_ref_column");
    expect(problem!.message).toContain(message);
    expect(problem!.line).toBe(7 + extra.length);
    expect(problem!.column).toBe(24);
  });
});

import { describe, expect, it } from "vitest";
import { externalRefColumnOf, parseRunbookOrThrow } from "./index.ts";

const runbook = (column: string, params: string[] = []) =>
  parseRunbookOrThrow(
    [
      "name: rb",
      "data_source:",
      "  type: postgres",
      "  query: SELECT 1",
      "  primary_key: Upn",
      "  batch_time: immediate",
      `  external_ref_column: ${column}`,
      "phases:",
      "  - name: p",
      "    offset: T-0",
      "    steps:",
      "      - name: s",
      "        worker_id: w",
      "        function: F",
      ...params,
    ].join("\n") + "\n",
  );

describe("externalRefColumnOf", () => {
  it("answers the configured column", () => {
    expect(externalRefColumnOf(runbook("TicketId"))).toBe("TicketId");
  });

  it("answers none when a secret param's template uses the column", () => {
    const secretUse = ["        params:", '          Password: "{{TicketId}}"'];
    expect(externalRefColumnOf(runbook("TicketId", secretUse))).toBeUndefined();
  });
});

import { parseRunbookOrThrow } from "@matoolkit/domain";
import { describe, expect, it } from "vitest";
import { csvHeaderLine, templateColumns } from "./runbook-template.ts";

const runbook = (body: string) =>
  parseRunbookOrThrow(
    "name: t\ndata_source:\n  type: csv\n  path: m.csv\n  primary_key: Upn\n  batch_time: immediate\n" + body,
  );

describe("templateColumns", () => {
  it("takes variables from phase steps, on_member_removed and rollbacks, function names included", () => {
    const definition = runbook(`
init:
  - name: group
    worker_id: w
    function: New-Group
    params: { Batch: "{{_batch_id}}" }
phases:
  - name: p
    offset: T-0
    steps:
      - name: s
        worker_id: w
        function: "Set-{{ Kind }}"
        params:
          Nested: { List: ["{{Zeta}}", "{{Upn}} at {{_batch_start_time}}"] }
        on_failure: undo
      - name: reads-output
        worker_id: w
        function: Use-It
        params: { Id: "{{MailboxId}}" }
        output_params: { MailboxId: id }
on_member_removed:
  - name: gone
    worker_id: w
    function: Remove-It
    params: { Who: "{{Alpha}}" }
rollbacks:
  undo:
    - name: u
      worker_id: w
      function: Undo-It
      params: { Why: "{{Reason}}" }
`);
    // Upn first (the key, also referenced); no specials, no output_params variable.
    expect(templateColumns(definition)).toEqual(["Upn", "Alpha", "Kind", "Reason", "Zeta"]);
  });

  it("adds the declared columns (issue 30) in their order, never a when: output or special", () => {
    const definition = runbook(`  columns: [HasMailbox, Region, Kind]
phases:
  - name: p
    offset: T-0
    when: "{{Region}} == 'EU'"
    steps:
      - name: find
        worker_id: w
        function: Find-It
        output_params: { TargetId: id }
      - name: s
        worker_id: w
        function: Do-It
        when: "{{TargetId}} is empty and {{Kind}} in ['user'] and {{_batch_id}} > 0"
`);
    expect(templateColumns(definition)).toEqual(["Upn", "HasMailbox", "Region", "Kind"]);
  });

  it("adds the external_ref_column (issue 31) after the declared columns, once", () => {
    const definition = runbook(`  columns: [Region]
  external_ref_column: TicketId
phases:
  - name: p
    offset: T-0
    steps:
      - name: s
        worker_id: w
        function: Do-It
        params: { Note: "{{TicketId}}", Other: "{{Zed}}" }
`);
    expect(templateColumns(definition)).toEqual(["Upn", "Region", "TicketId", "Zed"]);
  });
});

describe("csvHeaderLine", () => {
  it("quotes names a CSV reader would split or trim, and ends with CRLF", () => {
    expect(csvHeaderLine(["Upn", "Last, First", 'Say "hi"', " padded"])).toBe(
      'Upn,"Last, First","Say ""hi"""," padded"\r\n',
    );
  });
});

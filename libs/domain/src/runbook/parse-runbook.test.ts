import { describe, expect, it } from "vitest";
import type { RunbookDefinition } from "./model.ts";
import { RunbookValidationError, parseRunbook, parseRunbookOrThrow } from "./index.ts";

/** Built from 000's "Runbook YAML Format" snippets, exercising every field. */
const FULL_RUNBOOK = `
name: contoso-mailbox-migration
description: Moves Contoso mailboxes to Fabrikam.
data_source:
  type: databricks
  connection: DATABRICKS_URL
  warehouse_id: DATABRICKS_WAREHOUSE_ID
  query: SELECT * FROM migration.mailboxes
  primary_key: UserPrincipalName
  batch_time_column: MigrationTime
  multi_valued_columns:
    - name: Groups
      format: semicolon_delimited
    - name: Aliases
      format: json_array
retry:
  max_retries: 2
  interval: 1m
init:
  - name: create-batch-group
    worker_id: worker-01
    function: New-MigrationBatchGroup
    params:
      BatchId: "{{_batch_id}}"
      StartTime: "{{_batch_start_time}}"
phases:
  - name: prepare
    offset: T-5d
    steps:
      - name: create-target
        worker_id: worker-01
        function: "New-{{ObjectType}}"
        params:
          Email: "{{UserPrincipalName}}"
          Name: "{{FirstName}} {{LastName}}"
          Groups: "{{Groups}}"
          Options: { Force: true, Count: 3, Tags: [a, b] }
        output_params:
          TargetId: "id"
        on_failure: undo-mailbox-move
        retry:
          max_retries: 3
          interval: 30s
        timeout: 10m
  - name: cutover
    offset: T-90s
    steps:
      - name: move-mailbox
        worker_id: worker-02
        function: Start-MailboxMove
        params:
          TargetId: "{{TargetId}}"
        poll:
          interval: 15m
          timeout: 24h
      - name: no-retry-step
        worker_id: worker-02
        function: Set-Flag
        retry:
          max_retries: 0
  - name: finish
    offset: T-0
    steps:
      - name: notify
        worker_id: worker-01
        function: Send-Notice
on_member_removed:
  - name: disable-forwarding
    worker_id: worker-01
    function: Remove-MailForwarding
    params:
      UserPrincipalName: "{{UserPrincipalName}}"
rollbacks:
  undo-mailbox-move:
    - name: revert-mailbox
      worker_id: worker-01
      function: Undo-MailboxMove
      params:
        UserPrincipalName: "{{UserPrincipalName}}"
    - name: notify-admin
      worker_id: worker-01
      function: Send-AdminAlert
      params:
        Subject: "Rollback triggered for {{UserPrincipalName}}"
`;

const EXPECTED: RunbookDefinition = {
  name: "contoso-mailbox-migration",
  description: "Moves Contoso mailboxes to Fabrikam.",
  dataSource: {
    type: "databricks",
    connection: "DATABRICKS_URL",
    warehouseId: "DATABRICKS_WAREHOUSE_ID",
    query: "SELECT * FROM migration.mailboxes",
    primaryKey: "UserPrincipalName",
    batchTimeColumn: "MigrationTime",
    multiValuedColumns: [
      { name: "Groups", format: "semicolon_delimited" },
      { name: "Aliases", format: "json_array" },
    ],
  },
  retry: { maxRetries: 2, intervalSeconds: 60 },
  init: [
    {
      name: "create-batch-group",
      workerId: "worker-01",
      function: "New-MigrationBatchGroup",
      params: { BatchId: "{{_batch_id}}", StartTime: "{{_batch_start_time}}" },
      outputParams: {},
    },
  ],
  phases: [
    {
      name: "prepare",
      offset: "T-5d",
      offsetMinutes: 7200,
      steps: [
        {
          name: "create-target",
          workerId: "worker-01",
          function: "New-{{ObjectType}}",
          params: {
            Email: "{{UserPrincipalName}}",
            Name: "{{FirstName}} {{LastName}}",
            Groups: "{{Groups}}",
            Options: { Force: true, Count: 3, Tags: ["a", "b"] },
          },
          outputParams: { TargetId: "id" },
          onFailure: "undo-mailbox-move",
          retry: { maxRetries: 3, intervalSeconds: 30 },
          timeoutSeconds: 600,
        },
      ],
    },
    {
      name: "cutover",
      offset: "T-90s",
      offsetMinutes: 2,
      steps: [
        {
          name: "move-mailbox",
          workerId: "worker-02",
          function: "Start-MailboxMove",
          params: { TargetId: "{{TargetId}}" },
          outputParams: {},
          poll: { intervalSeconds: 900, timeoutSeconds: 86_400 },
        },
        {
          name: "no-retry-step",
          workerId: "worker-02",
          function: "Set-Flag",
          params: {},
          outputParams: {},
          retry: { maxRetries: 0, intervalSeconds: 0 },
        },
      ],
    },
    {
      name: "finish",
      offset: "T-0",
      offsetMinutes: 0,
      steps: [
        { name: "notify", workerId: "worker-01", function: "Send-Notice", params: {}, outputParams: {} },
      ],
    },
  ],
  onMemberRemoved: [
    {
      name: "disable-forwarding",
      workerId: "worker-01",
      function: "Remove-MailForwarding",
      params: { UserPrincipalName: "{{UserPrincipalName}}" },
      outputParams: {},
    },
  ],
  rollbacks: {
    "undo-mailbox-move": [
      {
        name: "revert-mailbox",
        workerId: "worker-01",
        function: "Undo-MailboxMove",
        params: { UserPrincipalName: "{{UserPrincipalName}}" },
        outputParams: {},
      },
      {
        name: "notify-admin",
        workerId: "worker-01",
        function: "Send-AdminAlert",
        params: { Subject: "Rollback triggered for {{UserPrincipalName}}" },
        outputParams: {},
      },
    ],
  },
};

const minimal = (dataSource: string) => `
name: local
data_source:
${dataSource}
phases:
  - name: only
    offset: T-0
    steps:
      - { name: s, worker_id: w, function: F }
`;

describe("parseRunbook: valid runbooks", () => {
  it("parses a runbook using every field into the normalized camelCase model", () => {
    const result = parseRunbook(FULL_RUNBOOK);
    expect(result).toEqual({ ok: true, runbook: EXPECTED });
  });

  it("omits optional sections as empty lists/maps so callers need no undefined checks", () => {
    const runbook = parseRunbookOrThrow(
      minimal("  type: postgres\n  query: SELECT * FROM members\n  primary_key: id\n  batch_time: immediate"),
    );
    expect(runbook).toMatchObject({ init: [], onMemberRemoved: [], rollbacks: {} });
    expect(runbook.retry).toBeUndefined();
    expect(runbook.dataSource).toEqual({
      type: "postgres",
      query: "SELECT * FROM members",
      primaryKey: "id",
      batchTime: "immediate",
      multiValuedColumns: [],
    });
  });

  it("accepts a csv source with a file path for local runs", () => {
    const runbook = parseRunbookOrThrow(
      minimal("  type: csv\n  path: ./members.csv\n  primary_key: Email\n  batch_time_column: Start"),
    );
    expect(runbook.dataSource).toMatchObject({
      type: "csv",
      path: "./members.csv",
      batchTimeColumn: "Start",
    });
  });
});

describe("parseRunbookOrThrow", () => {
  it("throws RunbookValidationError listing every problem as line:col path: message", () => {
    const text = minimal("  type: csv\n  primary_key: Email\n  batch_time: later");
    let caught: unknown;
    try {
      parseRunbookOrThrow(text);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(RunbookValidationError);
    const error = caught as RunbookValidationError;
    expect(error.reason).toBe("runbook.invalid");
    expect(error.problems).toHaveLength(2);
    expect(error.message).toContain(
      '4:3 data_source.path: missing required field "path" (required for type csv)',
    );
    expect(error.message).toContain(
      '6:15 data_source.batch_time: invalid value "later"; allowed values: immediate',
    );
  });
});

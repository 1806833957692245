import { writeFile } from "node:fs/promises";
import path from "node:path";
import type { Db } from "@matoolkit/db";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startApiHarness,
  TEST_SOURCE_DB_ENV,
  testRunbookYaml,
  type ApiHarness,
  type ApiResponse,
} from "../../test/api-test-harness.ts";
import { issueLocalToken } from "../auth/index.ts";
import { runbookPlanSchema } from "../read-models/runbook-plan-schemas.ts";
import { expectDocumentedBody, expectProblem } from "../../test/routes/batch-members.test-support.ts";

/** POST /api/runbooks/{name}/plan: the dry run from a CSV or the data source; nothing written. */
let harness: ApiHarness;
let operatorToken: string;

/** Steps with every kind of template: data columns, a secret, worker outputs, specials. */
const stepsYaml =
  "init:\n  - name: create-group\n    worker_id: worker-01\n    function: New-Group\n" +
  '    params:\n      Name: "batch-{{_batch_id}}"\n' +
  "phases:\n" +
  "  - name: prepare\n    offset: T-1d\n    steps:\n" +
  '      - name: create-user\n        worker_id: worker-01\n        function: "New-{{ObjectType}}"\n' +
  '        params:\n          Upn: "{{UserPrincipalName}}"\n          Proxies: "{{ProxyAddresses}}"\n' +
  '          AdminPassword: "{{InitialPassword}}"\n          Dept: "{{Department}}"\n' +
  "        output_params:\n          TargetId: id\n" +
  "  - name: cutover\n    offset: T-0\n    steps:\n" +
  "      - name: move\n        worker_id: worker-02\n        function: Move-Mailbox\n" +
  '        params:\n          Target: "{{TargetId}}"\n          Start: "{{_batch_start_time}}"\n';

const csvRunbook =
  "name: planned\ndata_source:\n  type: csv\n  path: members.csv\n  primary_key: UserPrincipalName\n" +
  "  batch_time: immediate\n  multi_valued_columns:\n    - name: ProxyAddresses\n      format: semicolon_delimited\n" +
  stepsYaml;

const sourceRunbook =
  `name: planned-source\ndata_source:\n  type: postgres\n  connection: ${TEST_SOURCE_DB_ENV}\n` +
  '  query: SELECT upn AS "UserPrincipalName", starts AS "MigrationDate", kind AS "ObjectType" FROM plan_source ORDER BY upn\n' +
  "  primary_key: UserPrincipalName\n  batch_time_column: MigrationDate\n" +
  stepsYaml;

const members =
  "UserPrincipalName,ObjectType,ProxyAddresses,InitialPassword\n" +
  "adele@contoso.test,EntraUser,smtp:a@contoso.test;smtp:b@contoso.test,hunter2\n" +
  "ben@contoso.test,EntraGuest,,hunter3\n" +
  "cleo@contoso.test,EntraUser,smtp:c@contoso.test,hunter4\n";

beforeAll(async () => {
  harness = await startApiHarness();
  operatorToken = await issueLocalToken({
    dataDir: harness.dataDir,
    issuer: "matoolkit-local",
    audience: "api://matoolkit",
    roles: ["Operator"],
    name: "operator@example.test",
    ttlSeconds: 600,
  });
  for (const yaml of [csvRunbook, sourceRunbook]) {
    const published = await harness.request("POST", "/runbooks", { body: yaml, type: "application/yaml" });
    expect(published.status).toBe(201);
  }
  await sql`CREATE TABLE plan_source (upn text, starts text, kind text)`.execute(harness.db);
  await sql`INSERT INTO plan_source VALUES
    ('a@contoso.test', '2030-06-10T09:00:00Z', 'EntraUser'),
    ('b@contoso.test', '2030-06-12T09:00:00Z', 'EntraUser'),
    ('c@contoso.test', '2030-06-10T09:00:00Z', 'EntraGuest')`.execute(harness.db);
});

afterAll(async () => {
  await harness?.stop();
});

const plan = (name: string, query: string, body: string, type = "text/csv", token = operatorToken) =>
  harness.request("POST", `/runbooks/${name}/plan${query}`, { body, type, token });

/** Row counts of every table a batch, a tick or the orchestrator would write. */
async function writtenRows(db: Db) {
  const tables = [
    "batches",
    "batch_members",
    "phase_executions",
    "step_executions",
    "init_executions",
    "outbox",
    "events",
  ] as const;
  const counts: Record<string, number> = {};
  for (const table of tables) {
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.table(table)}`.execute(db);
    counts[table] = rows[0]!.n;
  }
  return counts;
}

/** Runs the request and asserts it wrote nothing anywhere. */
async function nothingWritten(request: () => Promise<ApiResponse>): Promise<ApiResponse> {
  const before = await writtenRows(harness.db);
  const response = await request();
  expect(await writtenRows(harness.db)).toEqual(before);
  return response;
}

describe("POST /api/runbooks/{name}/plan from a CSV", () => {
  it("plans every member's steps with resolved names and params, masking secrets, and writes nothing", async () => {
    const response = await nothingWritten(() => plan("planned", "?limit=2", members));
    expect(response.status).toBe(200);
    expectDocumentedBody(runbookPlanSchema, response.body);
    const { batches, ...summary } = response.body;
    expect(summary).toEqual({
      runbook: { name: "planned", version: 1 },
      input: "csv",
      memberCount: 3,
      checkedMemberCount: 3,
      // Per member: Department is in no column (prepare), and a manual batch has no start time
      // (cutover's {{_batch_start_time}}): 2 × 3 members.
      unresolvedCount: 6,
      limit: 2,
    });
    expect(batches).toHaveLength(1);
    const [batch] = batches;
    expect(batch.batchStartTime).toBeNull();
    expect(batch.init).toEqual([
      {
        step: "create-group",
        workerId: "worker-01",
        functionName: "New-Group",
        params: { Name: "batch-{{_batch_id}}" },
        unresolved: [],
        resolvedAtRunTime: ["_batch_id"],
        when: null,
        whenDecision: "always",
        forEach: null,
      },
    ]);
    expect(batch.members.map((member: { key: string }) => member.key)).toEqual([
      "adele@contoso.test",
      "ben@contoso.test",
    ]);
    expect(batch.members[0].phases).toEqual([
      {
        phase: "prepare",
        dueAt: null,
        when: null,
        steps: [
          {
            step: "create-user",
            workerId: "worker-01",
            functionName: "New-EntraUser",
            params: {
              Upn: "adele@contoso.test",
              Proxies: ["smtp:a@contoso.test", "smtp:b@contoso.test"],
              AdminPassword: "***",
              Dept: "{{Department}}",
            },
            unresolved: ["Department"],
            resolvedAtRunTime: [],
            when: null,
            whenDecision: "always",
            forEach: null,
          },
        ],
      },
      {
        phase: "cutover",
        dueAt: null,
        when: null,
        steps: [
          {
            step: "move",
            workerId: "worker-02",
            functionName: "Move-Mailbox",
            params: { Target: "{{TargetId}}", Start: "{{_batch_start_time}}" },
            unresolved: ["_batch_start_time"],
            resolvedAtRunTime: ["TargetId"],
            when: null,
            whenDecision: "always",
            forEach: null,
          },
        ],
      },
    ]);
    expect(batch.members[1].phases[0].steps[0].functionName).toBe("New-EntraGuest");
    // Secrets and member data beyond the key and the resolved params never appear.
    expect(response.text).not.toMatch(/hunter/);
    expect(batch.members[0]).not.toHaveProperty("data");
  });

  it("plans an older version with ?version=, and 404s for a version or runbook that does not exist", async () => {
    const v2 = csvRunbook.replace("function: Move-Mailbox", "function: Move-MailboxV2");
    expect((await harness.request("POST", "/runbooks", { body: v2, type: "application/yaml" })).status).toBe(
      201,
    );
    const active = await plan("planned", "", members);
    expect(active.body.runbook.version).toBe(2);
    expect(active.body.batches[0].members[0].phases[1].steps[0].functionName).toBe("Move-MailboxV2");
    const old = await plan("planned", "?version=1", members);
    expect(old.body.runbook).toEqual({ name: "planned", version: 1 });
    expect(old.body.batches[0].members[0].phases[1].steps[0].functionName).toBe("Move-Mailbox");

    expectProblem(
      await plan("planned", "?version=9", members),
      404,
      "resource.not_found",
      /has no version 9/,
    );
    expectProblem(
      await plan("nobody", "", members),
      404,
      "resource.not_found",
      /no active runbook named 'nobody'/,
    );
  });

  it("answers 400 naming the line for a bad CSV, without its values, and writes nothing", async () => {
    const response = await nothingWritten(() =>
      plan("planned", "", "UserPrincipalName,ObjectType\nadele@contoso.test,EntraUser\n,secret-value\n"),
    );
    expectProblem(response, 400, "member_data.invalid", /line 3: empty primary key 'UserPrincipalName'/);
    expect(response.body.problems).toEqual([{ line: 3, message: "empty primary key 'UserPrincipalName'" }]);
    expect(response.text).not.toContain("secret-value");
  });

  it("answers 400 naming the problem for a missing body, a wrong type, a bad limit or an unknown parameter", async () => {
    const noBody = await harness.request("POST", "/runbooks/planned/plan", { token: operatorToken });
    expectProblem(noBody, 400, "validation.invalid_input", /send the members as a CSV body/);
    expectProblem(
      await plan("planned", "", '{"source": false}', "application/json"),
      400,
      "validation.invalid_input",
      /\{"source": true\}/,
    );
    expectProblem(
      await plan("planned", "?limit=0", members),
      400,
      "validation.invalid_input",
      /'limit' must be between 1 and 1000/,
    );
    expectProblem(await plan("planned", "?limit=1001", members), 400, "validation.invalid_input", /'limit'/);
    expectProblem(await plan("planned", "?verison=1", members), 400, "validation.invalid_input", /verison/);
  });

  it("is refused to a Reader (it shows resolved member data and may query the source)", async () => {
    const response = await plan("planned", "", members, "text/csv", harness.readerToken);
    expect(response.status).toBe(403);
    expect(response.body.detail).toMatch(/Operator/);
  });
});

describe("POST /api/runbooks/{name}/plan from the data source", () => {
  it("groups the rows by batch time, dates each phase from it, counts every row and writes nothing", async () => {
    const response = await nothingWritten(() =>
      plan("planned-source", "?limit=2", JSON.stringify({ source: true }), "application/json"),
    );
    expect(response.status).toBe(200);
    expectDocumentedBody(runbookPlanSchema, response.body);
    expect(response.body).toMatchObject({
      input: "source",
      memberCount: 3,
      // Only the listed rows are read whole and planned; the rest are counted.
      checkedMemberCount: 2,
      limit: 2,
    });
    const batches = response.body.batches;
    expect(batches.map((b: { batchStartTime: string }) => b.batchStartTime)).toEqual([
      "2030-06-10T09:00:00.000Z",
      "2030-06-12T09:00:00.000Z",
    ]);
    expect(batches[0].members[0].key).toBe("a@contoso.test");
    expect(batches[0].members[0].phases.map((p: { dueAt: string }) => p.dueAt)).toEqual([
      "2030-06-09T09:00:00.000Z",
      "2030-06-10T09:00:00.000Z",
    ]);
    // The batch has a start time, so {{_batch_start_time}} resolves (in .NET round-trip form).
    expect(batches[0].members[0].phases[1].steps[0]).toMatchObject({
      params: { Target: "{{TargetId}}", Start: "2030-06-10T09:00:00.0000000Z" },
      unresolved: [],
    });
    expect(batches[1].members[0].key).toBe("b@contoso.test");
  });

  it("plans immediate batching at now rounded to 5 minutes", async () => {
    await writeFile(path.join(harness.dataDir, "members.csv"), members);
    const yaml = testRunbookYaml({ name: "planned-immediate" });
    expect(
      (await harness.request("POST", "/runbooks", { body: yaml, type: "application/yaml" })).status,
    ).toBe(201);
    const before = Date.now();
    const response = await plan("planned-immediate", "", '{"source":true}', "application/json");
    expect(response.status).toBe(200);
    const start = Date.parse(response.body.batches[0].batchStartTime);
    expect(start % (5 * 60_000)).toBe(0);
    expect(Math.abs(start - before)).toBeLessThanOrEqual(150_000 + 5_000);
    expect(response.body.memberCount).toBe(3);
  });

  it("answers 422 for a source row a tick could not use, naming the row, not the value", async () => {
    await sql`INSERT INTO plan_source VALUES ('0-bad@contoso.test', 'not a date', 'EntraUser')`.execute(
      harness.db,
    );
    try {
      const response = await nothingWritten(() =>
        plan("planned-source", "", '{"source":true}', "application/json"),
      );
      expectProblem(response, 422, "member_data.invalid", /row 1: batch_time_column "MigrationDate"/);
      expect(response.text).not.toContain("0-bad");
    } finally {
      await sql`DELETE FROM plan_source WHERE upn = '0-bad@contoso.test'`.execute(harness.db);
    }
  });
});

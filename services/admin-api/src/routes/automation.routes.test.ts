import { writeFile } from "node:fs/promises";
import path from "node:path";
import { getActiveRunbook, insertBatch, type Db } from "@matoolkit/db";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startApiHarness,
  TEST_SOURCE_DB_ENV,
  testRunbookYaml,
  type ApiHarness,
} from "../../test/api-test-harness.ts";

let harness: ApiHarness;
const T1 = "2030-06-10T09:00:00.000Z";
const T2 = "2030-06-12T09:00:00.000Z";

beforeAll(async () => {
  harness = await startApiHarness();
});

afterAll(async () => {
  await harness?.stop();
});

const publish = async (yaml: string) =>
  expect((await harness.request("POST", "/runbooks", { body: yaml, type: "application/yaml" })).status).toBe(
    201,
  );

const putAutomation = (name: string, body: unknown, token?: string) =>
  harness.request("PUT", `/runbooks/${name}/automation`, {
    body: JSON.stringify(body),
    type: "application/json",
    ...(token === undefined ? {} : { token }),
  });

/** A scheduled runbook over a postgres table in the test database. */
function postgresRunbookYaml(name: string, table: string): string {
  return (
    `name: ${name}\ndata_source:\n  type: postgres\n  connection: ${TEST_SOURCE_DB_ENV}\n` +
    `  query: SELECT upn AS "UserPrincipalName", starts AS "MigrationDate", proxies AS "ProxyAddresses" FROM ${table} ORDER BY upn\n` +
    "  primary_key: UserPrincipalName\n  batch_time_column: MigrationDate\n" +
    "  multi_valued_columns:\n    - name: ProxyAddresses\n      format: semicolon_delimited\n" +
    "phases:\n  - name: cutover\n    offset: T-0\n    steps:\n      - name: move\n        worker_id: worker-01\n        function: Test-Echo\n"
  );
}

async function sourceTable(db: Db, table: string, rows: [string, string, string | null][]) {
  await sql`CREATE TABLE ${sql.table(table)} (upn text, starts text, proxies text)`.execute(db);
  for (const [upn, starts, proxies] of rows) {
    await sql`INSERT INTO ${sql.table(table)} VALUES (${upn}, ${starts}, ${proxies})`.execute(db);
  }
}

/** Row counts of every table a tick would write. */
async function writtenRows(db: Db) {
  const count = async (table: "batches" | "batchMembers" | "phaseExecutions" | "outbox" | "events") =>
    Number(
      (
        await db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as("n"))
          .executeTakeFirstOrThrow()
      ).n,
    );
  return {
    batches: await count("batches"),
    members: await count("batchMembers"),
    phases: await count("phaseExecutions"),
    outbox: await count("outbox"),
    events: await count("events"),
  };
}

describe("GET/PUT /api/runbooks/{name}/automation", () => {
  it("reports a runbook whose automation was never switched as disabled, to any reader", async () => {
    await publish(testRunbookYaml({ name: "auto-default" }));
    const response = await harness.request("GET", "/runbooks/auto-default/automation", {
      token: harness.readerToken,
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      runbookName: "auto-default",
      automationEnabled: false,
      enabledAt: null,
      enabledBy: null,
      disabledAt: null,
      disabledBy: null,
    });
  });

  it("switches automation on and off, recording who and when at each change", async () => {
    await publish(testRunbookYaml({ name: "auto-switch" }));
    const before = Date.now();
    const enabled = await putAutomation("auto-switch", { enabled: true });
    expect(enabled.status).toBe(200);
    expect(enabled.body).toMatchObject({
      automationEnabled: true,
      enabledBy: "admin@example.test",
      disabledBy: null,
    });
    expect(Date.parse(enabled.body.enabledAt)).toBeGreaterThanOrEqual(before - 1000);

    // Enabling again is not a change: the first enabler stays on record.
    const again = await putAutomation("auto-switch", { enabled: true });
    expect(again.body.enabledAt).toBe(enabled.body.enabledAt);

    const disabled = await putAutomation("auto-switch", { enabled: false });
    expect(disabled.body).toMatchObject({
      automationEnabled: false,
      enabledAt: enabled.body.enabledAt,
      enabledBy: "admin@example.test",
      disabledBy: "admin@example.test",
    });
    expect(disabled.body.disabledAt).not.toBeNull();
    const read = await harness.request("GET", "/runbooks/auto-switch/automation", {
      token: harness.readerToken,
    });
    expect(read.body).toEqual(disabled.body);
  });

  it("refuses a Reader, a malformed body and an unknown runbook", async () => {
    await publish(testRunbookYaml({ name: "auto-guard" }));
    expect((await putAutomation("auto-guard", { enabled: true }, harness.readerToken)).status).toBe(403);
    for (const body of [{}, { enabled: "yes" }, { enabled: true, by: "me" }]) {
      const response = await putAutomation("auto-guard", body);
      expect(response.status).toBe(400);
      expect(response.body.detail).toContain('"enabled"');
    }
    expect((await harness.request("GET", "/runbooks/auto-guard/automation")).body.automationEnabled).toBe(
      false,
    );
    expect((await putAutomation("no-such-runbook", { enabled: true })).status).toBe(404);
    expect((await harness.request("GET", "/runbooks/no-such-runbook/automation")).status).toBe(404);
  });
});

describe("POST /api/runbooks/{name}/query/preview", () => {
  it("shows the first rows and the batches they would form, writing nothing", async () => {
    await sourceTable(harness.db, "preview_members", [
      ["alex@contoso.test", T1, "smtp:alex@contoso.test;smtp:a@contoso.test"],
      ["bea@contoso.test", "2030-06-10 09:00:00", null],
      ["cy@contoso.test", T2, null],
      ["dan@contoso.test", T2, null],
    ]);
    await publish(postgresRunbookYaml("preview", "preview_members"));
    // T1 already has its batch: the preview says those rows would sync into it.
    const runbook = await getActiveRunbook(harness.db, "preview");
    const existing = await insertBatch(harness.db, {
      runbookId: runbook!.id,
      batchStartTime: new Date(T1),
      isManual: false,
      createdBy: null,
    });
    const before = await writtenRows(harness.db);

    const response = await harness.request("POST", "/runbooks/preview/query/preview");
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      runbookName: "preview",
      runbookVersion: 1,
      automationEnabled: false,
      limit: 20,
    });
    expect(response.body.rows).toEqual([
      {
        UserPrincipalName: "alex@contoso.test",
        MigrationDate: T1,
        ProxyAddresses: ["smtp:alex@contoso.test", "smtp:a@contoso.test"],
      },
      { UserPrincipalName: "bea@contoso.test", MigrationDate: "2030-06-10 09:00:00", ProxyAddresses: [] },
      { UserPrincipalName: "cy@contoso.test", MigrationDate: T2, ProxyAddresses: [] },
      { UserPrincipalName: "dan@contoso.test", MigrationDate: T2, ProxyAddresses: [] },
    ]);
    expect(response.body.batches).toEqual([
      { batchStartTime: T1, memberCount: 2, batchId: existing.id, batchStatus: "detected" },
      { batchStartTime: T2, memberCount: 2, batchId: null, batchStatus: null },
    ]);
    expect(await writtenRows(harness.db)).toEqual(before);

    const limited = await harness.request("POST", "/runbooks/preview/query/preview?limit=1");
    expect(limited.body.rows).toHaveLength(1);
    expect(limited.body.batches).toEqual([
      { batchStartTime: T1, memberCount: 1, batchId: existing.id, batchStatus: "detected" },
    ]);
  });

  it("groups a csv source in immediate mode at now rounded to 5 minutes", async () => {
    await writeFile(
      path.join(harness.dataDir, "members.csv"),
      "UserPrincipalName,ProxyAddresses\nalex@contoso.test,\nbea@contoso.test,\n",
    );
    await publish(testRunbookYaml({ name: "preview-csv" }));
    const response = await harness.request("POST", "/runbooks/preview-csv/query/preview?limit=500");
    expect(response.status).toBe(200);
    expect(response.body.batches).toHaveLength(1);
    expect(response.body.batches[0]).toMatchObject({ memberCount: 2, batchId: null });
    expect(new Date(response.body.batches[0].batchStartTime).getTime() % 300_000).toBe(0);
  });

  it("is Admin-only and checks the limit", async () => {
    expect(
      (await harness.request("POST", "/runbooks/preview/query/preview", { token: harness.readerToken }))
        .status,
    ).toBe(403);
    for (const limit of ["0", "501", "ten"]) {
      const response = await harness.request("POST", `/runbooks/preview/query/preview?limit=${limit}`);
      expect(response.status).toBe(400);
      expect(response.body.detail).toContain("'limit'");
    }
    expect((await harness.request("POST", "/runbooks/nothing/query/preview")).status).toBe(404);
  });

  it("answers a failing source with 502 and an unusable row with 422, naming no member data", async () => {
    await publish(postgresRunbookYaml("preview-broken", "missing_table"));
    const broken = await harness.request("POST", "/runbooks/preview-broken/query/preview");
    expect(broken.status).toBe(502);
    expect(broken.body.code).toBe("datasource.failed");
    expect(broken.body.detail).toContain("missing_table");

    await sourceTable(harness.db, "preview_bad_time", [
      ["alex@contoso.test", T1, null],
      ["bea@contoso.test", "after bea@contoso.test returns", null],
    ]);
    await publish(postgresRunbookYaml("preview-bad-time", "preview_bad_time"));
    const bad = await harness.request("POST", "/runbooks/preview-bad-time/query/preview");
    expect(bad.status).toBe(422);
    expect(bad.body).toEqual({
      type: "/problems/member_data.invalid",
      title: "Invalid member data",
      status: 422,
      code: "member_data.invalid",
      detail: 'row 2: batch_time_column "MigrationDate" is not an ISO 8601 date/time',
      requestId: expect.any(String),
    });
  });
});

import { createDataSourceClient } from "@matoolkit/datasources";
import { deactivateRunbookVersion, getActiveRunbook, setAutomationEnabled } from "@matoolkit/db";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  at,
  batchesOf,
  deactivateAllRunbooks,
  membersOf,
  publish,
  setSourceMembers,
  startSchedulerHarness,
  takeOutbox,
  writeCsv,
  type SchedulerHarness,
} from "../../test/test-support.ts";
import { processRunbook } from "./process-runbook.ts";

/**
 * 000 runbook_automation_settings ("disabling automation only stops new batch creation") and
 * Timer Lifecycle step 2 ("for each runbook, isolated try/catch"), with csv and postgres sources.
 */
let harness: SchedulerHarness;
const T1 = "2030-06-10T09:00:00.000Z";
const now = at("2030-06-01T12:00:00Z");

beforeAll(async () => {
  harness = await startSchedulerHarness();
});

afterAll(async () => {
  await harness?.stop();
});

beforeEach(async () => {
  await deactivateAllRunbooks(harness.db);
});

describe("the automation switch", () => {
  it("creates no batch for a runbook whose automation was never enabled, and does not even query it", async () => {
    const { db } = harness;
    // The source does not exist: querying it would fail the runbook.
    await publish(db, { name: "never-enabled", source: { csvPath: "missing.csv" } }, { automation: false });
    const outcome = await harness.tickRunbook("never-enabled", now);
    expect(outcome).toMatchObject({ ok: true, automationEnabled: false, sourceQueried: false });
    expect(await batchesOf(db, "never-enabled")).toEqual([]);
  });

  it("once disabled, creates no new batch but keeps syncing the batches in flight", async () => {
    const { db } = harness;
    const name = "switched-off";
    await publish(db, { name });
    await setSourceMembers(db, name, [{ upn: "alex@contoso.test", migrationDate: T1 }]);
    await harness.tickRunbook(name, now);
    const [batch] = await batchesOf(db, name);

    await setAutomationEnabled(db, { runbookName: name, enabled: false, actor: "admin", at: now });
    await setSourceMembers(db, name, [
      { upn: "bea@contoso.test", migrationDate: T1 },
      { upn: "cy@contoso.test", migrationDate: "2030-07-01T09:00:00Z" },
    ]);
    const outcome = await harness.tickRunbook(name, at("2030-06-01T12:05:00Z"));
    expect(outcome).toMatchObject({
      ok: true,
      automationEnabled: false,
      createdBatchIds: [],
      groupsNotCreated: 1,
      membersAdded: 1,
      membersRemoved: 1,
    });
    expect(await batchesOf(db, name)).toHaveLength(1);
    expect((await membersOf(db, batch!.id)).map((m) => [m.memberKey, m.status])).toEqual([
      ["alex@contoso.test", "removed"],
      ["bea@contoso.test", "active"],
    ]);
    expect((await takeOutbox(db)).map((m) => m.type).sort()).toEqual(["member-added", "member-removed"]);

    // Switched back on: the waiting group becomes a batch.
    await setAutomationEnabled(db, { runbookName: name, enabled: true, actor: "admin", at: now });
    expect(await harness.tickRunbook(name, at("2030-06-01T12:10:00Z"))).toMatchObject({
      groupsNotCreated: 0,
    });
    expect(await batchesOf(db, name)).toHaveLength(2);
  });
});

describe("a csv source", () => {
  it("runs the whole detection from a CSV file", async () => {
    const { db, csvDir } = harness;
    await writeCsv(csvDir, "wave.csv", [
      "UserPrincipalName,DisplayName,MigrationDate,ProxyAddresses",
      `alex@contoso.test,Alex Wilber,${T1},smtp:alex@contoso.test;smtp:aw@contoso.test`,
      "bea@contoso.test,Bea Lopez,2030-06-10 09:00:00,",
    ]);
    await publish(db, { name: "from-csv", source: { csvPath: "wave.csv" } });
    expect(await harness.tickRunbook("from-csv", now)).toMatchObject({ ok: true, sourceRows: 2 });
    const [batch, ...others] = await batchesOf(db, "from-csv");
    // Both spellings of the same instant land in one batch.
    expect(others).toEqual([]);
    expect(batch?.batchStartTime).toEqual(at(T1));
    const members = await membersOf(db, batch!.id);
    expect(members.map((m) => m.dataJson)).toEqual([
      {
        UserPrincipalName: "alex@contoso.test",
        DisplayName: "Alex Wilber",
        MigrationDate: T1,
        ProxyAddresses: ["smtp:alex@contoso.test", "smtp:aw@contoso.test"],
      },
      {
        UserPrincipalName: "bea@contoso.test",
        DisplayName: "Bea Lopez",
        MigrationDate: "2030-06-10 09:00:00",
        ProxyAddresses: [],
      },
    ]);
  });
});

describe("failures stay with their runbook", () => {
  it("records a failing source on last_error, processes the other runbooks, and clears it once the source answers", async () => {
    const { db, csvDir } = harness;
    await publish(db, { name: "broken", source: { query: "SELECT * FROM no_such_table" } });
    await writeCsv(csvDir, "healthy.csv", ["UserPrincipalName,MigrationDate", `alex@contoso.test,${T1}`]);
    await publish(db, { name: "healthy", source: { csvPath: "healthy.csv" } });

    const outcomes = await harness.tick(now);
    expect(outcomes.map((o) => [o.runbookName, o.ok])).toEqual([
      ["broken", false],
      ["healthy", true],
    ]);
    expect(await batchesOf(db, "healthy")).toHaveLength(1);
    const broken = await getActiveRunbook(db, "broken");
    expect(broken?.lastError).toMatch(/^datasource\.failed: postgres source: query failed: .*no_such_table/);
    expect(broken?.lastErrorAt).toEqual(now);
    expect((await getActiveRunbook(db, "healthy"))?.lastError).toBeNull();

    await db.schema
      .createTable("no_such_table")
      .addColumn("UserPrincipalName", "text")
      .addColumn("MigrationDate", "timestamptz")
      .execute();
    expect(await harness.tickRunbook("broken", at("2030-06-01T12:05:00Z"))).toMatchObject({ ok: true });
    expect(await getActiveRunbook(db, "broken")).toMatchObject({ lastError: null, lastErrorAt: null });
  });

  it("names the column and row of an unreadable batch time, never its value, and writes nothing", async () => {
    const { db, csvDir } = harness;
    await writeCsv(csvDir, "bad-time.csv", [
      "UserPrincipalName,MigrationDate",
      `alex@contoso.test,${T1}`,
      "bea@contoso.test,when bea@contoso.test is back",
    ]);
    await publish(db, { name: "bad-time", source: { csvPath: "bad-time.csv" } });
    const outcome = await harness.tickRunbook("bad-time", now);
    expect(outcome).toEqual({
      runbookName: "bad-time",
      ok: false,
      error: 'member_data.invalid: row 2: batch_time_column "MigrationDate" is not an ISO 8601 date/time',
    });
    const stored = await getActiveRunbook(db, "bad-time");
    expect(stored?.lastError).toBe(outcome.ok ? undefined : outcome.error);
    expect(stored?.lastError).not.toContain("bea");
    expect(await batchesOf(db, "bad-time")).toEqual([]);
  });

  it("rolls the whole sync back when a later row is bad: no member half-added", async () => {
    const { db } = harness;
    const name = "half-bad";
    await publish(db, { name });
    await setSourceMembers(db, name, [{ upn: "alex@contoso.test", migrationDate: T1 }]);
    await harness.tickRunbook(name, now);
    const [batch] = await batchesOf(db, name);
    await takeOutbox(db);
    // Bea (row 2) joins T1; Zoe (row 4, last in key order) has no batch time.
    await setSourceMembers(db, name, [
      { upn: "alex@contoso.test", migrationDate: T1 },
      { upn: "bea@contoso.test", migrationDate: T1 },
      { upn: "cy@contoso.test", migrationDate: "2030-07-01T09:00:00Z" },
      { upn: "zoe@contoso.test", migrationDate: null },
    ]);
    const outcome = await harness.tickRunbook(name, at("2030-06-01T12:05:00Z"));
    expect(outcome).toMatchObject({ ok: false, error: expect.stringContaining("row 4: batch_time_column") });
    expect((await membersOf(db, batch!.id)).map((m) => m.memberKey)).toEqual(["alex@contoso.test"]);
    expect(await batchesOf(db, name)).toHaveLength(1);
    expect(await takeOutbox(db)).toEqual([]);
  });

  it("records a missing csv file and a missing connection variable", async () => {
    const { db } = harness;
    await publish(db, { name: "no-file", source: { csvPath: "nowhere.csv" } });
    await publish(db, { name: "no-env", source: { query: "SELECT 1", connection: "UNSET_DB_URL" } });
    await harness.tick(now);
    expect((await getActiveRunbook(db, "no-file"))?.lastError).toBe(
      "datasource.failed: csv source: file not found: nowhere.csv",
    );
    expect((await getActiveRunbook(db, "no-env"))?.lastError).toContain("environment variable UNSET_DB_URL");
  });
});

describe("a runbook deactivated while a tick runs", () => {
  it("gets no batch from a tick that read it as active just before the deactivation", async () => {
    const { db, csvDir } = harness;
    await writeCsv(csvDir, "late.csv", ["UserPrincipalName,MigrationDate", `alex@contoso.test,${T1}`]);
    const stale = await publish(db, { name: "deactivated-mid-tick", source: { csvPath: "late.csv" } });
    // The operator's DELETE …/versions/1 commits between the tick's read and its sync.
    await deactivateRunbookVersion(db, stale.id);

    const result = await processRunbook(
      {
        db,
        dataSources: createDataSourceClient({ env: {}, baseDir: csvDir }),
        lifecycle: { batchCreated: async () => undefined, phasesChanged: async () => undefined },
      },
      stale,
      now,
    );
    expect(result.createdBatchIds).toEqual([]);
    expect(await batchesOf(db, "deactivated-mid-tick")).toEqual([]);
    expect(await takeOutbox(db)).toEqual([]);
  });
});

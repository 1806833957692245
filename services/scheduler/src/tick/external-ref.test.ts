import { publishRunbook, setAutomationEnabled } from "@matoolkit/db";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  at,
  batchesOf,
  deactivateAllRunbooks,
  memberTable,
  runbookYaml,
  setSourceMembers,
  startSchedulerHarness,
  type SchedulerHarness,
} from "../../test/test-support.ts";

/**
 * Issue 31: an automated batch takes its externalRef from the runbook's
 * `data_source.external_ref_column`: the first member's non-empty valid value, at creation.
 * Here the source's display_name column is read as TicketId.
 */
let harness: SchedulerHarness;

beforeAll(async () => {
  harness = await startSchedulerHarness();
});

afterAll(async () => {
  await harness?.stop();
});

beforeEach(async () => {
  await deactivateAllRunbooks(harness.db);
});

async function publishTicketed(name: string, column = "TicketId"): Promise<void> {
  const query =
    `SELECT upn AS "UserPrincipalName", migration_date AS "MigrationDate", ` +
    `display_name AS "TicketId", proxies AS "ProxyAddresses" FROM ${memberTable(name)} ORDER BY upn`;
  const yaml = runbookYaml({ name, source: { query } }).replace(
    "  primary_key: UserPrincipalName\n",
    `  primary_key: UserPrincipalName\n  external_ref_column: ${column}\n`,
  );
  await publishRunbook(harness.db, { name, yamlContent: yaml, overdueBehavior: "rerun", rerunInit: false });
  await setAutomationEnabled(harness.db, { runbookName: name, enabled: true, actor: "test", at: new Date() });
}

describe("externalRef from data_source.external_ref_column", () => {
  it("stamps each new batch with its first member's non-empty value, members disagreeing or not", async () => {
    const name = "ticketed";
    await publishTicketed(name);
    const wave1 = "2030-06-10T09:00:00Z";
    const wave2 = "2030-06-12T09:00:00Z";
    const wave3 = "2030-06-14T09:00:00Z";
    // ORDER BY upn: a… is staged first. Its empty ticket is passed over; b's wins over c's.
    await setSourceMembers(harness.db, name, [
      { upn: "a@contoso.test", displayName: " ", migrationDate: wave1 },
      { upn: "b@contoso.test", displayName: "CHG-100", migrationDate: wave1 },
      { upn: "c@contoso.test", displayName: "CHG-101", migrationDate: wave1 },
      { upn: "d@contoso.test", displayName: "REQ-7", migrationDate: wave2 },
      { upn: "e@contoso.test", displayName: "x".repeat(200), migrationDate: wave3 },
    ]);
    await harness.tickRunbook(name, at("2030-06-01T12:00:00Z"));
    const batches = await batchesOf(harness.db, name);
    expect(batches.map((batch) => [batch.batchStartTime?.toISOString(), batch.externalRef])).toEqual([
      ["2030-06-10T09:00:00.000Z", "CHG-100"],
      ["2030-06-12T09:00:00.000Z", "REQ-7"],
      // Too long for a reference: the batch is created all the same, without one.
      ["2030-06-14T09:00:00.000Z", null],
    ]);

    // A later tick with another ticket in the rows leaves the running batch's reference alone.
    await setSourceMembers(harness.db, name, [
      { upn: "b@contoso.test", displayName: "CHG-999", migrationDate: wave1 },
      { upn: "c@contoso.test", displayName: "CHG-999", migrationDate: wave1 },
      { upn: "d@contoso.test", displayName: "REQ-7", migrationDate: wave2 },
    ]);
    await harness.tickRunbook(name, at("2030-06-01T12:10:00Z"));
    expect((await batchesOf(harness.db, name))[0]?.externalRef).toBe("CHG-100");
  });

  it("stamps an immediate-mode batch too (its members are inserted after the batch)", async () => {
    const name = "ticketed-now";
    const query =
      `SELECT upn AS "UserPrincipalName", display_name AS "TicketId", proxies AS "ProxyAddresses" ` +
      `FROM ${memberTable(name)} ORDER BY upn`;
    const yaml = runbookYaml({ name, batching: "immediate", source: { query } }).replace(
      "  primary_key: UserPrincipalName\n",
      "  primary_key: UserPrincipalName\n  external_ref_column: TicketId\n",
    );
    await publishRunbook(harness.db, { name, yamlContent: yaml, overdueBehavior: "rerun", rerunInit: false });
    await setAutomationEnabled(harness.db, {
      runbookName: name,
      enabled: true,
      actor: "test",
      at: new Date(),
    });
    await setSourceMembers(harness.db, name, [
      { upn: "a@contoso.test", displayName: "RITM0042" },
      { upn: "b@contoso.test", displayName: "RITM0043" },
    ]);
    await harness.tickRunbook(name, at("2030-06-01T12:02:00Z"));
    expect((await batchesOf(harness.db, name)).map((batch) => batch.externalRef)).toEqual(["RITM0042"]);
  });

  it("never copies a column a secret param uses", async () => {
    const name = "secret-ticket";
    const query =
      `SELECT upn AS "UserPrincipalName", migration_date AS "MigrationDate", ` +
      `display_name AS "TicketId", proxies AS "ProxyAddresses" FROM ${memberTable(name)} ORDER BY upn`;
    const yaml = runbookYaml({ name, source: { query } })
      .replace(
        "  primary_key: UserPrincipalName\n",
        "  primary_key: UserPrincipalName\n  external_ref_column: TicketId\n",
      )
      .replace(
        '          Upn: "{{UserPrincipalName}}"\n',
        '          Upn: "{{UserPrincipalName}}"\n          Password: "{{TicketId}}"\n',
      );
    await publishRunbook(harness.db, { name, yamlContent: yaml, overdueBehavior: "rerun", rerunInit: false });
    await setAutomationEnabled(harness.db, {
      runbookName: name,
      enabled: true,
      actor: "test",
      at: new Date(),
    });
    await setSourceMembers(harness.db, name, [
      { upn: "a@contoso.test", displayName: "S3cret", migrationDate: "2030-06-10T09:00:00Z" },
    ]);
    await harness.tickRunbook(name, at("2030-06-01T12:00:00Z"));
    expect((await batchesOf(harness.db, name)).map((batch) => batch.externalRef)).toEqual([null]);
  });
});

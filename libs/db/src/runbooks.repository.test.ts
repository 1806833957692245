import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getAutomationSettings } from "./automation-settings.repository.ts";
import type { Db } from "./connection.ts";
import {
  getActiveRunbook,
  getRunbookById,
  getRunbookVersion,
  listActiveRunbooks,
  listRunbookVersions,
  publishRunbook,
} from "./runbooks.repository.ts";
import { uniqueName } from "../test/test-fixtures.ts";

let testDb: TestDatabase;
let db: Db;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
});
afterAll(async () => {
  await testDb.drop();
});

const publish = (name: string, yamlContent = "name: x\n") =>
  publishRunbook(db, { name, yamlContent, overdueBehavior: "ignore", rerunInit: true });

describe("publishRunbook", () => {
  it("numbers versions from 1 and keeps only the newest active", async () => {
    const name = uniqueName("publish");
    const first = await publish(name, "v: 1\n");
    const second = await publish(name, "v: 2\n");
    expect(first).toMatchObject({ version: 1, isActive: true, overdueBehavior: "ignore", rerunInit: true });
    expect(second).toMatchObject({ version: 2, isActive: true, yamlContent: "v: 2\n", dataTableName: null });
    expect((await getRunbookById(db, first.id))?.isActive).toBe(false);
    expect((await getActiveRunbook(db, name))?.id).toBe(second.id);
    expect((await getRunbookVersion(db, name, 1))?.yamlContent).toBe("v: 1\n");
    expect((await listRunbookVersions(db, name)).map((runbook) => runbook.version)).toEqual([2, 1]);
  });

  it("gives concurrent publishes of one name consecutive versions with exactly one active", async () => {
    const name = uniqueName("concurrent");
    await publish(name);
    const published = await Promise.all([publish(name), publish(name), publish(name)]);
    expect(published.map((runbook) => runbook.version).sort()).toEqual([2, 3, 4]);
    const versions = await listRunbookVersions(db, name);
    expect(versions.filter((runbook) => runbook.isActive).map((runbook) => runbook.version)).toEqual([4]);
  });

  it("joins the caller's transaction: a rollback leaves the previous version active", async () => {
    const name = uniqueName("rollback");
    const first = await publish(name);
    await expect(
      db.transaction().execute(async (trx) => {
        await publishRunbook(trx, {
          name,
          yamlContent: "v: 2\n",
          overdueBehavior: "rerun",
          rerunInit: false,
        });
        throw new Error("admin request failed later");
      }),
    ).rejects.toThrow("admin request failed later");
    expect((await getActiveRunbook(db, name))?.id).toBe(first.id);
    expect(await listRunbookVersions(db, name)).toHaveLength(1);
  });

  it("lists one active version per runbook", async () => {
    const names = [uniqueName("listed"), uniqueName("listed")];
    for (const name of names) {
      await publish(name);
      await publish(name);
    }
    const active = (await listActiveRunbooks(db)).filter((runbook) => names.includes(runbook.name));
    expect(active.map((runbook) => [runbook.name, runbook.version])).toEqual(names.map((name) => [name, 2]));
  });
});

describe("getAutomationSettings", () => {
  it("returns the stored settings, or undefined for a runbook never configured", async () => {
    const name = uniqueName("automation");
    expect(await getAutomationSettings(db, name)).toBeUndefined();
    const enabledAt = new Date("2030-01-01T00:00:00Z");
    await db
      .insertInto("runbookAutomationSettings")
      .values({ runbookName: name, automationEnabled: true, enabledAt, enabledBy: "admin@contoso" })
      .execute();
    expect(await getAutomationSettings(db, name)).toMatchObject({
      runbookName: name,
      automationEnabled: true,
      enabledAt,
      disabledAt: null,
    });
  });
});

import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "./connection.ts";
import { seedBatch } from "../test/test-fixtures.ts";

let testDb: TestDatabase;
let db: Db;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
});
afterAll(async () => {
  await testDb.drop();
});

describe("Db naming", () => {
  it("speaks camelCase through the query builder and keeps jsonb keys exactly as stored", async () => {
    const { batch } = await seedBatch(db, 0);
    const data = { source_upn: "a@fabrikam.com", Target: { mail_nickname: "a" } };
    await db
      .insertInto("batchMembers")
      .values({ batchId: batch.id, memberKey: "k", dataJson: data })
      .execute();
    const member = await db
      .selectFrom("batchMembers")
      .select(["memberKey", "dataJson", "workerDataJson"])
      .where("batchId", "=", batch.id)
      .executeTakeFirstOrThrow();
    expect(member).toEqual({ memberKey: "k", dataJson: data, workerDataJson: {} });
  });

  it("returns raw SQL rows with the column names the SQL uses", async () => {
    const { batch } = await seedBatch(db, 1);
    const { rows } = await sql<Record<string, unknown>>`
      SELECT member_key, data_json FROM batch_members WHERE batch_id = ${batch.id}`.execute(db);
    expect(rows).toEqual([{ member_key: "member-0", data_json: { Index: 0 } }]);
  });
});

import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { camelCaseRows, camelToSnake } from "./camel-case.ts";
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

  it("renames the top-level keys of raw rows, the same way every time, and never the data inside", () => {
    const rows = [
      { step_index: 1, result_json: { mail_nickname: "a" }, item_2_value: null },
      { step_index: 2, result_json: null, item_2_value: "b" },
    ];
    const converted = camelCaseRows<Record<string, unknown>>(rows);
    expect(converted).toEqual([
      { stepIndex: 1, resultJson: { mail_nickname: "a" }, item2Value: null },
      { stepIndex: 2, resultJson: null, item2Value: "b" },
    ]);
    expect(rows[0]).toHaveProperty("step_index", 1);
    expect(camelToSnake("batchMemberId")).toBe("batch_member_id");
    expect(camelToSnake("batchMemberId")).toBe("batch_member_id");
  });
});

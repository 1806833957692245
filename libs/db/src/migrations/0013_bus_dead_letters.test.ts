import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../connection.ts";
import { migrations } from "./index.ts";

let testDb: TestDatabase;
let db: Db;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
});
afterAll(async () => {
  await testDb.drop();
});

describe("0013_bus_dead_letters", () => {
  it("keeps the dead letters a service recorded in the table it used to create itself (matoolkit_dapr.dead_letters)", async () => {
    const migration = migrations["0013_bus_dead_letters"]!;
    await migration.down!(db);
    // The table as libs/runtime created it at start before this migration.
    await sql`CREATE SCHEMA matoolkit_dapr`.execute(db);
    await sql`
      CREATE TABLE matoolkit_dapr.dead_letters (
        id bigserial PRIMARY KEY, message_id text NOT NULL, topic text NOT NULL,
        subscription text NOT NULL, body jsonb, properties jsonb NOT NULL,
        delivery_count integer NOT NULL, error text NOT NULL,
        dead_lettered_at timestamptz NOT NULL DEFAULT now(), UNIQUE (topic, subscription, message_id)
      )`.execute(db);
    await sql`
      INSERT INTO matoolkit_dapr.dead_letters (message_id, topic, subscription, body, properties, delivery_count, error, dead_lettered_at)
      VALUES ('m-1', 'orchestrator-events', 'orchestrator', '{"BatchId":1}', '{}', 10, 'message.invalid: no such batch', '2025-01-02T03:04:05Z'),
             ('m-2', 'worker-results', 'orchestrator', NULL, '{"MessageType":"x"}', 3, 'dapr.dead_lettered', '2025-01-02T03:04:06Z')`.execute(
      db,
    );

    await migration.up(db);

    const { rows } = await sql<{ messageId: string; deliveryCount: number; error: string; at: string }>`
      SELECT message_id AS "messageId", delivery_count AS "deliveryCount", error,
             to_char(dead_lettered_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') AS "at"
      FROM bus_dead_letters ORDER BY id`.execute(db);
    expect(rows).toEqual([
      {
        messageId: "m-1",
        deliveryCount: 10,
        error: "message.invalid: no such batch",
        at: "2025-01-02T03:04:05",
      },
      { messageId: "m-2", deliveryCount: 3, error: "dapr.dead_lettered", at: "2025-01-02T03:04:06" },
    ]);
  });
});

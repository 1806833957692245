import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../connection.ts";
import { seedBatch } from "../../test/test-fixtures.ts";
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

const NEW_INDEXES = [
  "events_annotations_idx",
  "init_executions_dispatched_idx",
  "step_executions_dispatched_idx",
];

async function indexesPresent(target: Db): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    SELECT indexname AS name FROM pg_indexes WHERE indexname = ANY(${NEW_INDEXES}) ORDER BY indexname`.execute(
    target,
  );
  return rows.map((row) => row.name);
}

/** Raw updates: the CHECK constraint alone decides, not the state machine. */
const setStatus = (target: Db, table: "batches" | "phase_executions", id: number, status: string) =>
  sql`UPDATE ${sql.table(table)} SET status = ${status} WHERE id = ${id}`.execute(target);

describe("0002_cancellation", () => {
  it("lets batches and phases be cancelled, and still nothing else", async () => {
    const seeded = await seedBatch(db, 1);
    await expect(setStatus(db, "batches", seeded.batch.id, "cancelled")).resolves.toBeDefined();
    await expect(setStatus(db, "phase_executions", seeded.phase.id, "cancelled")).resolves.toBeDefined();
    await expect(setStatus(db, "batches", seeded.batch.id, "suspended")).rejects.toThrow(
      /batches_status_check/,
    );
  });

  it("indexes the annotation events; its indexes of dispatched executions gave way to 0022's open ones", async () => {
    expect(await indexesPresent(db)).toEqual(["events_annotations_idx"]);
    const { rows } = await sql<{ name: string }>`
      SELECT indexname AS name FROM pg_indexes WHERE indexname LIKE '%executions_open_idx' ORDER BY 1`.execute(
      db,
    );
    expect(rows.map((row) => row.name)).toEqual(["init_executions_open_idx", "step_executions_open_idx"]);
  });

  it("can be rolled back and applied again", async () => {
    const scratch = await createTestDatabase();
    try {
      const migration = migrations["0002_cancellation"]!;
      const seeded = await seedBatch(scratch.db, 1);
      await migration.down!(scratch.db);
      expect(await indexesPresent(scratch.db)).toEqual([]);
      await expect(setStatus(scratch.db, "batches", seeded.batch.id, "cancelled")).rejects.toThrow(
        /batches_status_check/,
      );
      await migration.up(scratch.db);
      expect(await indexesPresent(scratch.db)).toEqual(NEW_INDEXES);
      await expect(setStatus(scratch.db, "batches", seeded.batch.id, "cancelled")).resolves.toBeDefined();
    } finally {
      await scratch.drop();
    }
  });
});

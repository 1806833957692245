import { createTestDatabase } from "@matoolkit/testing";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import type { Db } from "../connection.ts";
import { seedBatch } from "../../test/test-fixtures.ts";
import { migrations } from "./index.ts";

const SEARCH_INDEXES = [
  "batch_members_lower_key_idx",
  "batches_created_by_idx",
  "batches_detected_at_idx",
  "batches_external_ref_idx",
];

async function indexesOf(db: Db): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    SELECT indexname AS name FROM pg_indexes
    WHERE indexname = ANY(${SEARCH_INDEXES}) ORDER BY indexname`.execute(db);
  return rows.map((row) => row.name);
}

describe("0018_batch_search", () => {
  it("adds external_ref and the search indexes, none on step_executions, and rolls back and applies again", async () => {
    const scratch = await createTestDatabase();
    try {
      expect(await indexesOf(scratch.db)).toEqual(SEARCH_INDEXES);
      const { rows: onSteps } = await sql<{ name: string }>`
        SELECT indexname AS name FROM pg_indexes
        WHERE tablename = 'step_executions' AND indexname = ANY(${SEARCH_INDEXES})`.execute(scratch.db);
      expect(onSteps).toEqual([]);

      const { batch } = await seedBatch(scratch.db, 1);
      const migration = migrations["0018_batch_search"]!;
      await migration.down!(scratch.db);
      expect(await indexesOf(scratch.db)).toEqual([]);
      await expect(sql`SELECT external_ref FROM batches`.execute(scratch.db)).rejects.toThrow(/external_ref/);
      await migration.up(scratch.db);
      expect(await indexesOf(scratch.db)).toEqual(SEARCH_INDEXES);
      // Batches older than the column have no reference.
      const { rows } = await sql<{ ref: string | null }>`
        SELECT external_ref AS ref FROM batches WHERE id = ${batch.id}`.execute(scratch.db);
      expect(rows).toEqual([{ ref: null }]);
      await expect(
        sql`UPDATE batches SET external_ref = '' WHERE id = ${batch.id}`.execute(scratch.db),
      ).rejects.toThrow(/batches_external_ref_length/);
    } finally {
      await scratch.drop();
    }
  });
});

import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { transitionBatch } from "../batches.repository.ts";
import type { Db } from "../connection.ts";
import { insertSteps } from "../steps.repository.ts";
import { seedBatch, stepRow } from "../../test/test-fixtures.ts";
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

const setBatch = (target: Db, id: number, column: string, value: string) =>
  sql`UPDATE batches SET ${sql.id(column)} = ${value} WHERE id = ${id}`.execute(target);

describe("0009_operations", () => {
  it("lets a batch be paused and an ended batch or phase carry one of the three outcomes, and nothing else", async () => {
    const seeded = await seedBatch(db, 1);
    await expect(setBatch(db, seeded.batch.id, "status", "paused")).resolves.toBeDefined();
    for (const outcome of ["succeeded", "partially_succeeded", "failed"]) {
      await expect(setBatch(db, seeded.batch.id, "outcome", outcome)).resolves.toBeDefined();
      await expect(
        sql`UPDATE phase_executions SET outcome = ${outcome} WHERE id = ${seeded.phase.id}`.execute(db),
      ).resolves.toBeDefined();
    }
    await expect(setBatch(db, seeded.batch.id, "outcome", "mostly")).rejects.toThrow(/outcome_check/);
  });

  it("starts executions at redrive 0, and records the operator of a change, not the system", async () => {
    const seeded = await seedBatch(db, 1);
    await insertSteps(db, [stepRow(seeded, seeded.members[0]!, 0)]);
    const step = await db
      .selectFrom("stepExecutions")
      .select("redriveCount")
      .where("batchId", "=", seeded.batch.id)
      .executeTakeFirstOrThrow();
    expect(step.redriveCount).toBe(0);
    await transitionBatch(db, seeded.batch.id, "activate", { reason: "init complete" });
    await transitionBatch(db, seeded.batch.id, "pause", { actor: "ops@contoso.example" });
    const events = await db
      .selectFrom("events")
      .select(["toStatus", "actor"])
      .where("batchId", "=", seeded.batch.id)
      .where("entity", "=", "batch")
      .orderBy("id")
      .execute();
    expect(events).toEqual([
      { toStatus: "detected", actor: null },
      { toStatus: "active", actor: null },
      { toStatus: "paused", actor: "ops@contoso.example" },
    ]);
  });

  it("can be rolled back and applied again", async () => {
    const scratch = await createTestDatabase();
    try {
      const migration = migrations["0009_operations"]!;
      const seeded = await seedBatch(scratch.db, 1);
      await migration.down!(scratch.db);
      await expect(setBatch(scratch.db, seeded.batch.id, "status", "paused")).rejects.toThrow(
        /batches_status_check/,
      );
      await migration.up(scratch.db);
      await expect(setBatch(scratch.db, seeded.batch.id, "status", "paused")).resolves.toBeDefined();
    } finally {
      await scratch.drop();
    }
  });
});

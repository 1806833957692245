import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../connection.ts";
import { insertPhases } from "../phases.repository.ts";
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

/** Raw updates: the CHECK constraints alone decide, not the state machine. */
const setColumns = (target: Db, id: number, assignments: ReturnType<typeof sql>) =>
  sql`UPDATE phase_executions SET ${assignments} WHERE id = ${id}`.execute(target);

async function gatedPhase(target: Db): Promise<{ ungated: number; gated: number }> {
  const seeded = await seedBatch(target, 0);
  const [gated] = await insertPhases(target, seeded.batch.id, [
    {
      phaseName: "cutover",
      sequence: 1,
      offsetMinutes: 0,
      dueAt: null,
      runbookVersion: seeded.runbook.version,
      approval: { timeoutSeconds: 60, timeoutOutcome: "approve" },
    },
  ]);
  return { ungated: seeded.phase.id, gated: gated!.id };
}

describe("0015_approval_gates", () => {
  it("lets only a gated, undecided phase wait for approval", async () => {
    const { ungated, gated } = await gatedPhase(db);
    await expect(setColumns(db, ungated, sql`status = 'awaiting_approval'`)).rejects.toThrow(
      /phase_executions_approval_check/,
    );
    await expect(setColumns(db, gated, sql`status = 'awaiting_approval'`)).resolves.toBeDefined();
    await expect(setColumns(db, gated, sql`approval_decision = 'approved'`)).rejects.toThrow(
      /phase_executions_approval_check/,
    );
    await expect(
      setColumns(db, gated, sql`status = 'dispatched', approval_decision = 'approved'`),
    ).resolves.toBeDefined();
  });

  it("accepts only the gate's own values", async () => {
    const { gated } = await gatedPhase(db);
    await expect(setColumns(db, gated, sql`approval_timeout_outcome = 'maybe'`)).rejects.toThrow(
      /approval_timeout_outcome_check/,
    );
    await expect(setColumns(db, gated, sql`approval_timeout_seconds = 0`)).rejects.toThrow(
      /approval_timeout_seconds_check/,
    );
    await expect(setColumns(db, gated, sql`approval_decision = 'postponed'`)).rejects.toThrow(
      /approval_decision_check/,
    );
  });

  it("can be rolled back and applied again", async () => {
    const scratch = await createTestDatabase();
    try {
      const migration = migrations["0015_approval_gates"]!;
      const { ungated } = await gatedPhase(scratch.db);
      await migration.down!(scratch.db);
      await expect(setColumns(scratch.db, ungated, sql`status = 'awaiting_approval'`)).rejects.toThrow(
        /phase_executions_status_check/,
      );
      await migration.up(scratch.db);
      const { rows } = await sql<{ required: boolean }>`
        SELECT approval_required AS required FROM phase_executions WHERE id = ${ungated}`.execute(scratch.db);
      // Rows older than the gate are ungated.
      expect(rows).toEqual([{ required: false }]);
    } finally {
      await scratch.drop();
    }
  });
});

import { batchMachine, executionMachine, memberMachine, phaseMachine } from "@matoolkit/domain";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../connection.ts";
import { insertBatch } from "../batches.repository.ts";
import { insertSteps } from "../steps.repository.ts";
import { seedBatch, stepRow } from "../../test/test-fixtures.ts";
import { migrations } from "./index.ts";

const TABLES = [
  "batch_members",
  "batches",
  "events",
  "idempotency_keys",
  "init_executions",
  "outbox",
  "phase_executions",
  "runbook_automation_settings",
  "runbooks",
  "step_executions",
];

let testDb: TestDatabase;
let db: Db;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
});
afterAll(async () => {
  await testDb.drop();
});

async function tablesPresent(target: Db): Promise<string[]> {
  const { rows } = await sql<{ tableName: string }>`
    SELECT table_name AS "tableName" FROM information_schema.tables
    WHERE table_schema = 'public' AND table_name = ANY(${TABLES}) ORDER BY table_name`.execute(target);
  return rows.map((row) => row.tableName);
}

/** The values a column's CHECK (col IN (...)) constraint allows, as PostgreSQL reports them. */
async function allowedValues(table: string, column: string): Promise<string[]> {
  const { rows } = await sql<{ definition: string }>`
    SELECT pg_get_constraintdef(oid) AS definition FROM pg_constraint
    WHERE conrelid = ${table}::regclass AND contype = 'c' AND conname = ${`${table}_${column}_check`}`.execute(
    db,
  );
  const definition = rows[0]?.definition ?? "";
  return [...definition.matchAll(/'([^']+)'/g)].map((match) => match[1]!).sort();
}

describe("0001_initial", () => {
  it("creates every table", async () => {
    expect(await tablesPresent(db)).toEqual(TABLES);
  });

  it("allows exactly the states of each state machine in the status columns", async () => {
    const sorted = (states: readonly string[]) => [...states].sort();
    expect(await allowedValues("batches", "status")).toEqual(sorted(batchMachine.states));
    expect(await allowedValues("batch_members", "status")).toEqual(sorted(memberMachine.states));
    expect(await allowedValues("phase_executions", "status")).toEqual(sorted(phaseMachine.states));
    expect(await allowedValues("step_executions", "status")).toEqual(sorted(executionMachine.states));
    expect(await allowedValues("init_executions", "status")).toEqual(sorted(executionMachine.states));
  });

  it("rejects a status outside the machine and a row pointing at nothing", async () => {
    const seeded = await seedBatch(db, 1);
    await expect(
      sql`UPDATE batches SET status = 'suspended' WHERE id = ${seeded.batch.id}`.execute(db),
    ).rejects.toThrow(/batches_status_check/);
    await insertSteps(db, [stepRow(seeded, seeded.members[0]!, 0)]);
    await expect(
      sql`UPDATE step_executions SET status = 'rolled_back' WHERE batch_id = ${seeded.batch.id}`.execute(db),
    ).rejects.toThrow(/step_executions_status_check/);
    await expect(
      insertBatch(db, { runbookId: 999_999, batchStartTime: null, isManual: true, createdBy: "admin" }),
    ).rejects.toThrow(/foreign key/);
    await expect(
      sql`INSERT INTO runbooks (name, version, yaml_content, overdue_behavior) VALUES ('x', 1, '', 'sometimes')`.execute(
        db,
      ),
    ).rejects.toThrow(/runbooks_overdue_behavior_check/);
  });

  it("keeps at most one active member per key and batch, but lets a removed key come back", async () => {
    const seeded = await seedBatch(db, 1);
    const insertKey = () =>
      sql`INSERT INTO batch_members (batch_id, member_key) VALUES (${seeded.batch.id}, 'member-0')`.execute(
        db,
      );
    await expect(insertKey()).rejects.toThrow(/batch_members_one_active_per_key/);
    await sql`UPDATE batch_members SET status = 'removed' WHERE batch_id = ${seeded.batch.id}`.execute(db);
    await expect(insertKey()).resolves.toBeDefined();
  });

  it("can be rolled back and applied again", async () => {
    const scratch = await createTestDatabase();
    try {
      // Later migrations' tables reference 0001's (batch_source_fingerprints → batches): roll
      // them back first, newest first, as the migrator would.
      const names = Object.keys(migrations).sort();
      for (const name of [...names].reverse()) await migrations[name]!.down!(scratch.db);
      expect(await tablesPresent(scratch.db)).toEqual([]);
      for (const name of names) await migrations[name]!.up(scratch.db);
      expect(await tablesPresent(scratch.db)).toEqual(TABLES);
    } finally {
      await scratch.drop();
    }
  });
});

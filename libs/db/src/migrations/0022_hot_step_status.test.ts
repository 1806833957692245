import { executionMachine, type ExecutionEvent } from "@matoolkit/domain";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../connection.ts";
import { insertSteps, listStepsByPhase, phaseReadyToClose, transitionStep } from "../steps.repository.ts";
import { seedBatch, stepRow } from "../../test/test-fixtures.ts";

let testDb: TestDatabase;
let db: Db;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
});
afterAll(async () => {
  await testDb.drop();
});

/** Row updates of step_executions by one transition, and how many of them were HOT. */
async function updatesOf(event: ExecutionEvent, stepId: number): Promise<{ updated: number; hot: number }> {
  return db.transaction().execute(async (trx) => {
    // pg_stat_xact_*: this backend's counts not yet reported (this transaction's and maybe
    // earlier ones'), stable within a transaction: the difference is this transition's.
    const counts = async () => {
      const { rows } = await sql<{ updated: string; hot: string }>`
        SELECT n_tup_upd AS updated, n_tup_hot_upd AS hot FROM pg_stat_xact_user_tables
        WHERE relid = 'step_executions'::regclass`.execute(trx);
      return { updated: Number(rows[0]?.updated ?? 0), hot: Number(rows[0]?.hot ?? 0) };
    };
    const before = await counts();
    if ((await transitionStep(trx, stepId, event, { set: { jobId: `step-${stepId}` } })) === undefined)
      throw new Error(`step ${stepId}: ${event} refused`);
    const after = await counts();
    return { updated: after.updated - before.updated, hot: after.hot - before.hot };
  });
}

describe("0022_hot_step_status", () => {
  it("marks a step open exactly while the execution machine calls its status not terminal", async () => {
    const seeded = await seedBatch(db, 1);
    await insertSteps(db, [stepRow(seeded, seeded.members[0]!, 0)]);
    const [step] = await listStepsByPhase(db, seeded.phase.id);
    for (const status of executionMachine.states) {
      // Set directly: every state, whichever transitions lead there.
      await sql`UPDATE step_executions SET status = ${status} WHERE id = ${step!.id}`.execute(db);
      const { rows } = await sql<{ isOpen: boolean }>`
        SELECT is_open AS "isOpen" FROM step_executions WHERE id = ${step!.id}`.execute(db);
      expect({ status, open: rows[0]!.isOpen }).toEqual({
        status,
        open: !(executionMachine.terminal as readonly string[]).includes(status),
      });
    }
  });

  it("dispatches and starts polling without touching an index (HOT updates); finishing leaves the open index", async () => {
    const seeded = await seedBatch(db, 1);
    await insertSteps(db, [stepRow(seeded, seeded.members[0]!, 0)]);
    const [step] = await listStepsByPhase(db, seeded.phase.id);
    // Before 0022 none was HOT: status and dispatched_at were read by indexes. (The share of HOT
    // updates on pages a bulk insert filled, where the fill factor's room counts, is measured by
    // bench/orchestrator-throughput.ts with BENCH_WAL_BREAKDOWN=1: HOT_UPDATE against UPDATE.)
    expect(await updatesOf("dispatch", step!.id)).toEqual({ updated: 1, hot: 1 });
    expect(await updatesOf("start_polling", step!.id)).toEqual({ updated: 1, hot: 1 });
    expect(await updatesOf("succeed", step!.id)).toEqual({ updated: 1, hot: 0 });
  });

  it("takes a finished step out of the open steps, and a retry puts it back", async () => {
    const seeded = await seedBatch(db, 1);
    await insertSteps(db, [stepRow(seeded, seeded.members[0]!, 0)]);
    // A dispatched phase whose steps are all created: only its open steps keep it from closing.
    await sql`UPDATE phase_executions SET status = 'dispatched', steps_created_at = now()
      WHERE id = ${seeded.phase.id}`.execute(db);
    const [step] = await listStepsByPhase(db, seeded.phase.id);
    await updatesOf("dispatch", step!.id);
    expect(await phaseReadyToClose(db, seeded.phase.id)).toBe(false);

    await updatesOf("fail", step!.id);
    expect(await phaseReadyToClose(db, seeded.phase.id)).toBe(true);

    await updatesOf("retry", step!.id);
    expect(await phaseReadyToClose(db, seeded.phase.id)).toBe(false);
  });
});

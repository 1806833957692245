import { sql, type Kysely, type Migration } from "kysely";

/**
 * Issue 29: a step's dispatch becomes a HOT update (heap only: no new entry in any index).
 *
 * PostgreSQL updates a row "HOT" only when no column an index reads (key, INCLUDE, expression
 * or partial-index predicate) changes and the page has room for the new version
 * (https://www.postgresql.org/docs/15/storage-hot.html). `status` was read by five indexes of
 * step_executions, so every status change wrote a new entry into all seven of them, and the
 * dispatch also changed `dispatched_at` (an index key). Measured by `BENCH_WAL_BREAKDOWN=1`:
 * ~1.5 kB of index WAL per step execution.
 *
 * Now no index of step_executions reads `status`, `dispatched_at` or `last_polled_at`:
 * - `is_open`, a stored generated column (status is pending, dispatched or polling: not terminal),
 *   is the one thing indexes know of a step's progress. Dispatch (pending → dispatched) and
 *   start_polling (dispatched → polling) leave it true: HOT. Completion turns it false (one non-HOT
 *   update per run, as an open-steps index must drop the row); a retry or redrive turns it back.
 * - `step_executions_open_idx (phase_execution_id) WHERE is_open` replaces the partial indexes on
 *   status (open by phase, dispatched by dispatched_at, polling by last_polled_at): open steps are
 *   few (a phase's start window, not its history), so the sweeps read them all and test status and
 *   times on the row. Queries name `is_open` for the planner to choose it.
 * - (batch_member_id) replaces (batch_member_id, status); the read models' (batch_id, phase,
 *   member) index keeps its order without INCLUDE (status): their aggregate reads the rows.
 * - fillfactor 70: steps are inserted in bulk, so pages would be full and the next version could
 *   not stay on its page; 30 % is left for it (bench:orchestrator at 2,000 × 5: 0.90 HOT updates
 *   per step execution, about every dispatch; the other 1.33 updates are completions, retries).
 *
 * init_executions shares the execution queries (execution-repository.ts), so it gets the same
 * column and open-rows index in place of its partial indexes on status. Adding a stored column
 * rewrites each table once, under an exclusive lock, at this migration.
 */
export const hotStepStatusMigration: Migration = {
  async up(db: Kysely<unknown>) {
    // Open rows by what their readers group them by: a step's phase, an init step's batch.
    for (const [table, key] of [
      ["step_executions", "phase_execution_id"],
      ["init_executions", "batch_id"],
    ] as const) {
      // Before the column: the rewrite it causes then leaves the room on every page.
      await sql`ALTER TABLE ${sql.table(table)} SET (fillfactor = 70)`.execute(db);
      await sql`
        ALTER TABLE ${sql.table(table)} ADD COLUMN is_open boolean NOT NULL
        GENERATED ALWAYS AS (status IN ('pending', 'dispatched', 'polling')) STORED
      `.execute(db);
      await sql`CREATE INDEX ${sql.id(`${table}_open_idx`)} ON ${sql.table(table)} (${sql.ref(key)}) WHERE is_open`.execute(
        db,
      );
    }
    await sql`DROP INDEX step_executions_open_by_phase_idx`.execute(db);
    await sql`DROP INDEX step_executions_dispatched_idx`.execute(db);
    await sql`DROP INDEX step_executions_polling_idx`.execute(db);
    await sql`DROP INDEX init_executions_dispatched_idx`.execute(db);
    await sql`DROP INDEX init_executions_polling_idx`.execute(db);
    await sql`DROP INDEX step_executions_member_status_idx`.execute(db);
    await sql`CREATE INDEX step_executions_member_idx ON step_executions (batch_member_id)`.execute(db);
    await sql`DROP INDEX step_executions_batch_outcome_idx`.execute(db);
    await sql`
      CREATE INDEX step_executions_batch_outcome_idx
      ON step_executions (batch_id, phase_execution_id, batch_member_id)
    `.execute(db);
  },
  async down(db: Kysely<unknown>) {
    await sql`DROP INDEX step_executions_batch_outcome_idx`.execute(db);
    await sql`
      CREATE INDEX step_executions_batch_outcome_idx
      ON step_executions (batch_id, phase_execution_id, batch_member_id) INCLUDE (status)
    `.execute(db);
    await sql`DROP INDEX step_executions_member_idx`.execute(db);
    await sql`CREATE INDEX step_executions_member_status_idx ON step_executions (batch_member_id, status)`.execute(
      db,
    );
    for (const table of ["step_executions", "init_executions"]) {
      await sql`
        CREATE INDEX ${sql.id(`${table}_polling_idx`)} ON ${sql.table(table)} (last_polled_at)
        WHERE status = 'polling'
      `.execute(db);
      await sql`
        CREATE INDEX ${sql.id(`${table}_dispatched_idx`)} ON ${sql.table(table)} (dispatched_at)
        WHERE status = 'dispatched'
      `.execute(db);
      await sql`DROP INDEX ${sql.id(`${table}_open_idx`)}`.execute(db);
      await sql`ALTER TABLE ${sql.table(table)} DROP COLUMN is_open`.execute(db);
      await sql`ALTER TABLE ${sql.table(table)} RESET (fillfactor)`.execute(db);
    }
    await sql`
      CREATE INDEX step_executions_open_by_phase_idx ON step_executions (phase_execution_id)
      WHERE status IN ('pending', 'dispatched', 'polling')
    `.execute(db);
  },
};

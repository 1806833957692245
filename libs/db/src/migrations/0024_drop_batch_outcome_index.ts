import { sql, type Kysely, type Migration } from "kysely";

/**
 * Issue 29: the hot path stops paying for an index only a read model used.
 *
 * `step_executions_batch_outcome_idx` (batch, phase, member) was made for the admin API's member
 * counts (migration 0006: an index-only scan with `status` INCLUDEd). Since migration 0022 no index
 * holds `status` (so that a dispatch is a HOT update), the counts read the step rows anyway, and
 * PostgreSQL plans them the same way through either index on the batch (a bitmap heap scan of the
 * batch's steps, then a hash aggregate: `EXPLAIN ANALYZE` of countBatchMembers on a batch of
 * 10,000 members × 5 steps beside two more, 26.5 ms through this index, 26.9 ms through
 * `step_executions_batch_id_idx` without it): this one duplicated the other's leading column.
 * Every step row wrote an entry in this index twice (its insert, its non-HOT completion):
 * `BENCH_WAL_BREAKDOWN=1` at 2,000 × 5 measured 179 bytes of WAL and 2.2 index insertions per step
 * execution for it. No write path read it.
 */
export const dropBatchOutcomeIndexMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`DROP INDEX IF EXISTS step_executions_batch_outcome_idx`.execute(db);
  },
  async down(db: Kysely<unknown>) {
    await sql`
      CREATE INDEX IF NOT EXISTS step_executions_batch_outcome_idx
      ON step_executions (batch_id, phase_execution_id, batch_member_id)
    `.execute(db);
  },
};

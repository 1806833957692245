import { sql, type Kysely, type Migration } from "kysely";

/**
 * `for_each:` steps (issue 30, docs/runbook-for-each.md): a member's step runs once per value of a
 * list, each value its own step_executions row sharing the step's index. phase-due creates ONE row
 * per step as before (item 0, no value yet); when the step's turn comes the orchestrator expands
 * it: that row takes the first value and rows 1..n-1 are inserted beside it.
 *
 * - item_index: the value's position (0 for every step that is not a for_each).
 * - item_value: the value (`{{item}}`), jsonb because an output list may hold objects; null until
 *   the row is expanded, and on every ordinary step. Expansion claims the row with
 *   `item_value IS NULL`, so two deliveries cannot both expand it.
 * - item_count: how many values the step has for the member (the `[2/5]` of the read models).
 *
 * The unique key gains item_index: a second expansion attempt or a duplicate phase-due still
 * creates nothing twice. Existing rows are item 0, so the old key's rows stay unique.
 */
export const forEachItemsMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`ALTER TABLE step_executions
      ADD COLUMN item_index integer NOT NULL DEFAULT 0,
      ADD COLUMN item_value jsonb,
      ADD COLUMN item_count integer`.execute(db);
    await sql`ALTER TABLE step_executions
      ADD CONSTRAINT step_executions_phase_member_index_item_key
        UNIQUE (phase_execution_id, batch_member_id, step_index, item_index)`.execute(db);
    await sql`ALTER TABLE step_executions DROP CONSTRAINT step_executions_phase_member_index_key`.execute(db);
  },
  async down(db: Kysely<unknown>) {
    // Fails while an expanded for_each step exists: its rows share one (phase, member, index).
    await sql`ALTER TABLE step_executions
      ADD CONSTRAINT step_executions_phase_member_index_key
        UNIQUE (phase_execution_id, batch_member_id, step_index)`.execute(db);
    await sql`ALTER TABLE step_executions
      DROP CONSTRAINT step_executions_phase_member_index_item_key,
      DROP COLUMN item_count,
      DROP COLUMN item_value,
      DROP COLUMN item_index`.execute(db);
  },
};

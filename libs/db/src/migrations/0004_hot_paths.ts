import { sql, type Kysely, type Migration } from "kysely";

/**
 * Indexes for the orchestrator's per-result hot path. After every worker result it asks whether
 * the phase still has an open step; with this partial index that is one index probe however
 * large the phase (a phase of 10,000 members has 50,000 steps).
 */
export const hotPathsMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`
      CREATE INDEX step_executions_open_by_phase_idx ON step_executions (phase_execution_id)
      WHERE status IN ('pending', 'dispatched', 'polling')
    `.execute(db);
  },
  async down(db: Kysely<unknown>) {
    await sql`DROP INDEX IF EXISTS step_executions_open_by_phase_idx`.execute(db);
  },
};

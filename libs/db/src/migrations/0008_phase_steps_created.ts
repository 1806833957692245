import { sql, type Kysely, type Migration } from "kysely";

/**
 * phase-due creates a big phase's steps in chunks, one transaction each, so jobs flow as soon as
 * the first chunk commits (issue 17). `steps_created_at` says the last chunk has committed: until
 * then the phase cannot complete (members of later chunks have no steps yet) and a member-added
 * catch-up leaves the phase to phase-due. Phases already past pending had all their steps created
 * in one transaction by earlier versions: they are marked as done.
 */
export const phaseStepsCreatedMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`ALTER TABLE phase_executions ADD COLUMN steps_created_at timestamptz`.execute(db);
    await sql`UPDATE phase_executions SET steps_created_at = coalesce(dispatched_at, now())
      WHERE status <> 'pending'`.execute(db);
  },
  async down(db: Kysely<unknown>) {
    await sql`ALTER TABLE phase_executions DROP COLUMN IF EXISTS steps_created_at`.execute(db);
  },
};

import { sql, type Kysely, type Migration } from "kysely";

/**
 * Issue 29: every status change of a step is a non-HOT update (its status is in other indexes),
 * so each one adds an entry to EVERY index of `step_executions`, twice per step execution. The
 * indexes on `job_id` (migration 0001) serve no query: a result finds its execution by id and
 * checks the job id on that row (`id = … AND job_id = …`, execution-repository.ts and
 * transition.ts), and nothing looks an execution up by job id alone. Dropping them takes their
 * WAL and their upkeep off the hot path.
 */
export const dropUnusedJobIdIndexesMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`DROP INDEX IF EXISTS step_executions_job_id_idx`.execute(db);
    await sql`DROP INDEX IF EXISTS init_executions_job_id_idx`.execute(db);
  },
  async down(db: Kysely<unknown>) {
    await sql`CREATE INDEX IF NOT EXISTS step_executions_job_id_idx ON step_executions (job_id)`.execute(db);
    await sql`CREATE INDEX IF NOT EXISTS init_executions_job_id_idx ON init_executions (job_id)`.execute(db);
  },
};

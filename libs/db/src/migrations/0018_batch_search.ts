import { sql, type Kysely, type Migration } from "kysely";

/**
 * Finding batches (issue 31, docs/operating-batches.md "Finding batches and members"):
 *
 * - batches.external_ref: the change ticket / request id a batch belongs to. Bounded here as in
 *   the domain's checkExternalRef (1–128 characters; control characters are refused there, a
 *   second regex here would only drift from it).
 * - Batch list filters: created_by and external_ref are equality filters on a list ordered by id
 *   (newest first), so each index ends with id and a page is read in order off the index;
 *   external_ref is partial (most batches have none). detected_at (the creation time) serves
 *   createdAfter / createdBefore ranges. batches gets a row per wave: these cost nothing on the
 *   hot path.
 * - GET /api/members?key=: every batch a key is or was in. Matched case-insensitively (a UPN or
 *   email differing only in case is the same mailbox), so the index is on lower(member_key).
 *   batch_members gets one row per member per batch (inserted once, updated on status changes,
 *   which do not touch this index's key); step_executions, the table that is written all the
 *   time, gets nothing.
 */
export const batchSearchMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`ALTER TABLE batches ADD COLUMN external_ref text
      CONSTRAINT batches_external_ref_length CHECK (char_length(external_ref) BETWEEN 1 AND 128)`.execute(db);
    await sql`CREATE INDEX batches_created_by_idx ON batches (created_by, id)`.execute(db);
    await sql`CREATE INDEX batches_external_ref_idx ON batches (external_ref, id)
      WHERE external_ref IS NOT NULL`.execute(db);
    await sql`CREATE INDEX batches_detected_at_idx ON batches (detected_at)`.execute(db);
    await sql`CREATE INDEX batch_members_lower_key_idx ON batch_members (lower(member_key), batch_id)`.execute(
      db,
    );
  },
  async down(db: Kysely<unknown>) {
    await sql`DROP INDEX IF EXISTS batch_members_lower_key_idx`.execute(db);
    await sql`DROP INDEX IF EXISTS batches_detected_at_idx`.execute(db);
    await sql`DROP INDEX IF EXISTS batches_external_ref_idx`.execute(db);
    await sql`DROP INDEX IF EXISTS batches_created_by_idx`.execute(db);
    await sql`ALTER TABLE batches DROP COLUMN external_ref`.execute(db);
  },
};

import { sql, type Kysely, type Migration } from "kysely";

/**
 * Retention and erasure of personal data (issue 31 item 2, docs/operating-batches.md "Retention").
 *
 * - batches.purged_at / purge_mode: the purge job scrubbed (`scrub`: keys and statuses kept) or
 *   deleted (`delete`: member, phase, step and init rows removed) the batch's personal data. The
 *   read models say "personal data purged on …" instead of showing empty data silently, and the
 *   job skips marked batches (it marks a batch last, so a crashed run is simply run again).
 * - batch_members.erased_at: this member's data was erased on a data-subject request
 *   (DELETE /api/members/{key}); a second request finds it already erased.
 * - batch_members_member_key_idx: the erasure looks a key up across every batch.
 * - batches_purge_candidates_idx: the daily job's scan reads only ended, unpurged batches.
 * - events_batch_entity_idx: when a batch ended (its last batch event) is found among its few
 *   batch rows, not by walking the events of its 100,000 members.
 */
export const retentionMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`ALTER TABLE batches
      ADD COLUMN purged_at timestamptz,
      ADD COLUMN purge_mode text CHECK (purge_mode IN ('scrub', 'delete')),
      ADD CONSTRAINT batches_purge_mode_with_purged_at CHECK ((purged_at IS NULL) = (purge_mode IS NULL))`.execute(
      db,
    );
    await sql`ALTER TABLE batch_members ADD COLUMN erased_at timestamptz`.execute(db);
    await sql`CREATE INDEX batch_members_member_key_idx ON batch_members (member_key)`.execute(db);
    await sql`CREATE INDEX batches_purge_candidates_idx ON batches (id)
      WHERE purged_at IS NULL AND status IN ('completed', 'failed', 'cancelled')`.execute(db);
    await sql`CREATE INDEX events_batch_entity_idx ON events (batch_id, id) WHERE entity = 'batch'`.execute(
      db,
    );
  },
  async down(db: Kysely<unknown>) {
    await sql`DROP INDEX IF EXISTS events_batch_entity_idx`.execute(db);
    await sql`DROP INDEX IF EXISTS batches_purge_candidates_idx`.execute(db);
    await sql`DROP INDEX IF EXISTS batch_members_member_key_idx`.execute(db);
    await sql`ALTER TABLE batch_members DROP COLUMN erased_at`.execute(db);
    await sql`ALTER TABLE batches
      DROP CONSTRAINT batches_purge_mode_with_purged_at,
      DROP COLUMN purge_mode,
      DROP COLUMN purged_at`.execute(db);
  },
};

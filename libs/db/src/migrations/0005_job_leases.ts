import { sql, type Kysely, type Migration } from "kysely";

/**
 * Leases on idempotency claims (issue 11): a claim names its owner (one worker process) and holds
 * until `lease_expires_at`, which the owner pushes forward while it works. An unfinished claim
 * past its lease belongs to a dead owner and is taken over. Both columns stay NULL on completed
 * rows; a claim written before this migration has no lease and reads as lost (its owner, a
 * process from before the upgrade, never renews it).
 */
export const jobLeasesMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`ALTER TABLE idempotency_keys ADD COLUMN owner text, ADD COLUMN lease_expires_at timestamptz`.execute(
      db,
    );
  },
  async down(db: Kysely<unknown>) {
    await sql`ALTER TABLE idempotency_keys DROP COLUMN IF EXISTS lease_expires_at, DROP COLUMN IF EXISTS owner`.execute(
      db,
    );
  },
};

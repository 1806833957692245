import type { Kysely, Migration } from "kysely";

/**
 * The scheduler's member diff (member-sync.repository.ts) looks members up by batch and key in
 * every status (a failed member is not re-added, a removed one may come back). The unique index
 * of 0001 covers active members only, so without this one a diff whose statistics are stale (a
 * batch of 100,000 members created a minute ago) can plan a nested loop over the batch's
 * members for every source row: minutes instead of milliseconds.
 */
export const schedulerMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createIndex("batch_members_batch_key_idx")
      .on("batch_members")
      .columns(["batch_id", "member_key"])
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropIndex("batch_members_batch_key_idx").ifExists().execute();
  },
};

import { sql, type Kysely, type Migration } from "kysely";

/**
 * Index for the admin API's members pages (GET /api/batches/{id}/members?limit=&afterId=, see
 * listMembersPage in members.repository.ts): a page reads exactly its entries, in order. Without
 * it the batch's first page fetched the whole batch through (batch_id, status) and sorted it
 * (10,000 rows, 636 buffers, ~4 ms, for every page request) or walked the primary key past other
 * batches' members. Members are written once per batch and rarely after: one more index entry
 * per member is cheap.
 */
export const membersPageMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`CREATE INDEX batch_members_batch_id_idx ON batch_members (batch_id, id)`.execute(db);
  },
  async down(db: Kysely<unknown>) {
    await sql`DROP INDEX IF EXISTS batch_members_batch_id_idx`.execute(db);
  },
};

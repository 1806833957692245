import { sql, type Kysely, type Migration } from "kysely";
import { inList } from "./0001_initial/ddl-helpers.ts";

// Frozen copies as of this migration: events.entity before, and with webhook audit rows.
const ENTITIES_BEFORE = ["batch", "member", "phase", "step", "init", "runbook", "automation"];
const ENTITIES = [...ENTITIES_BEFORE, "webhook"];

/**
 * Webhooks (issue 25): removal becomes a tombstone (`deleted_at`, `deleted_by`): a deleted webhook
 * gets no deliveries and leaves the lists, but its delivery history stays; `webhook` audit rows
 * (created, deleted, pinged). `secret` from now on holds the AES-256-GCM sealed value
 * (`v1:<keyId>:…`, libs/platform secrets): SQL cannot encrypt without the key, which never
 * enters the database, so each service seals rows still in clear at its start
 * (sealWebhookSecrets), and no reader accepts a clear value.
 */
export const webhookTombstonesMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`ALTER TABLE webhooks ADD COLUMN deleted_at timestamptz, ADD COLUMN deleted_by text`.execute(db);
    await sql`DROP INDEX IF EXISTS webhooks_runbook_idx`.execute(db);
    await sql`CREATE INDEX webhooks_runbook_idx ON webhooks (runbook_name) WHERE enabled AND deleted_at IS NULL`.execute(
      db,
    );
    await replaceEntityCheck(db, ENTITIES);
  },
  async down(db: Kysely<unknown>) {
    // Fails while webhook audit rows exist: delete them first (they are audit only).
    await replaceEntityCheck(db, ENTITIES_BEFORE);
    await sql`DROP INDEX IF EXISTS webhooks_runbook_idx`.execute(db);
    await sql`CREATE INDEX webhooks_runbook_idx ON webhooks (runbook_name) WHERE enabled`.execute(db);
    await sql`ALTER TABLE webhooks DROP COLUMN deleted_at, DROP COLUMN deleted_by`.execute(db);
  },
};

async function replaceEntityCheck(db: Kysely<unknown>, entities: readonly string[]): Promise<void> {
  await db.schema.alterTable("events").dropConstraint("events_entity_check").execute();
  await db.schema
    .alterTable("events")
    .addCheckConstraint("events_entity_check", inList("entity", entities))
    .execute();
}

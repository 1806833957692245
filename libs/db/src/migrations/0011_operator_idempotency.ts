import type { Kysely, Migration } from "kysely";
import { inList, now } from "./0001_initial/ddl-helpers.ts";

// Frozen copies as of this migration: events.entity before, and with the audit-only entities.
const ENTITIES_BEFORE = ["batch", "member", "phase", "step", "init"];
/** `runbook`: publish and deactivate; `automation`: the switch (entity_id = the active version's id). */
const ENTITIES = [...ENTITIES_BEFORE, "runbook", "automation"];

/**
 * Operator safety (issue 12): audit rows for writes that are not status changes of a batch's
 * entities (runbook publish and deactivation, the automation switch), the Idempotency-Key store of
 * the admin API's POSTs, and the fingerprint of each manual batch's CSV, so an identical second
 * upload within a few minutes is refused.
 */
export const operatorIdempotencyMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await replaceEntityCheck(db, ENTITIES);
    await db.schema
      .createTable("api_idempotency_keys")
      // The token's `sub`: keys are per caller, so one caller's key never replays another's answer.
      .addColumn("subject", "text", (col) => col.notNull())
      .addColumn("key", "text", (col) => col.notNull())
      .addColumn("method", "text", (col) => col.notNull())
      .addColumn("path", "text", (col) => col.notNull())
      // sha256 of the query string and the body: the same key with another request is refused.
      .addColumn("fingerprint", "text", (col) => col.notNull())
      // Which claim owns the row: only the request that inserted it stores its answer or releases it.
      .addColumn("claim_id", "uuid", (col) => col.notNull())
      // Null while the first request is in flight; then the answer a retry replays.
      .addColumn("status", "integer")
      .addColumn("response_body", "jsonb")
      .addColumn("response_headers", "jsonb")
      .addColumn("created_at", "timestamptz", (col) => col.notNull().defaultTo(now))
      .addColumn("expires_at", "timestamptz", (col) => col.notNull())
      .addPrimaryKeyConstraint("api_idempotency_keys_pkey", ["subject", "key"])
      .execute();
    await db.schema
      .createIndex("api_idempotency_keys_expires_at_idx")
      .on("api_idempotency_keys")
      .column("expires_at")
      .execute();
    // A table of its own, not a batches column: every read of a batch row (`SELECT *` in the
    // repositories, spread into API answers and messages) would otherwise carry the hash along.
    await db.schema
      .createTable("batch_source_fingerprints")
      .addColumn("batch_id", "integer", (col) => col.primaryKey().references("batches.id"))
      // sha256 of the runbook name and the normalized CSV (admin API createManualBatchCommand).
      .addColumn("fingerprint", "text", (col) => col.notNull())
      .addColumn("created_at", "timestamptz", (col) => col.notNull().defaultTo(now))
      .execute();
    // The duplicate check: uploads of one fingerprint, newest first.
    await db.schema
      .createIndex("batch_source_fingerprints_fingerprint_idx")
      .on("batch_source_fingerprints")
      .columns(["fingerprint", "created_at"])
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable("batch_source_fingerprints").ifExists().execute();
    await db.schema.dropTable("api_idempotency_keys").ifExists().execute();
    // Fails while audit rows of the new entities exist: delete them first (they are audit only).
    await replaceEntityCheck(db, ENTITIES_BEFORE);
  },
};

/** 0001 created the check inline: PostgreSQL named it `events_entity_check`. */
async function replaceEntityCheck(db: Kysely<unknown>, entities: readonly string[]): Promise<void> {
  await db.schema.alterTable("events").dropConstraint("events_entity_check").execute();
  await db.schema
    .alterTable("events")
    .addCheckConstraint("events_entity_check", inList("entity", entities))
    .execute();
}

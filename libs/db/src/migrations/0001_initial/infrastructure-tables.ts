import type { Kysely } from "kysely";
import { inList, now } from "./ddl-helpers.ts";

export async function createInfrastructureTables(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("events")
    .addColumn("id", "bigint", (col) => col.primaryKey().generatedAlwaysAsIdentity())
    .addColumn("batch_id", "integer", (col) => col.references("batches.id"))
    .addColumn("entity", "text", (col) =>
      col.notNull().check(inList("entity", ["batch", "member", "phase", "step", "init"])),
    )
    .addColumn("entity_id", "integer", (col) => col.notNull())
    .addColumn("from_status", "text")
    .addColumn("to_status", "text", (col) => col.notNull())
    .addColumn("reason", "text")
    .addColumn("at", "timestamptz", (col) => col.notNull().defaultTo(now))
    .execute();
  await db.schema.createIndex("events_batch_id_idx").on("events").columns(["batch_id", "id"]).execute();

  await db.schema
    .createTable("outbox")
    .addColumn("id", "bigint", (col) => col.primaryKey().generatedAlwaysAsIdentity())
    .addColumn("message_id", "text", (col) => col.notNull())
    .addColumn("topic", "text", (col) => col.notNull())
    .addColumn("properties", "jsonb", (col) => col.notNull())
    .addColumn("body", "jsonb", (col) => col.notNull())
    .addColumn("deliver_at", "timestamptz")
    .addColumn("created_at", "timestamptz", (col) => col.notNull().defaultTo(now))
    .execute();

  await db.schema
    .createTable("idempotency_keys")
    .addColumn("key", "text", (col) => col.primaryKey())
    .addColumn("state", "text", (col) => col.notNull().check(inList("state", ["in_progress", "completed"])))
    .addColumn("value", "jsonb")
    .addColumn("claimed_at", "timestamptz", (col) => col.notNull().defaultTo(now))
    .addColumn("expires_at", "timestamptz", (col) => col.notNull())
    .execute();
  // The expiry sweep deletes by expires_at.
  await db.schema
    .createIndex("idempotency_keys_expires_at_idx")
    .on("idempotency_keys")
    .column("expires_at")
    .execute();
}

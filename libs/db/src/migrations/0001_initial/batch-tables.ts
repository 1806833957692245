import { sql, type Kysely } from "kysely";
import { emptyJsonObject, inList, now } from "./ddl-helpers.ts";

// Frozen copies of the machines' states as of this migration (a later state needs a new
// migration); db-schema.test.ts checks they still match libs/domain.
const BATCH_STATES = ["detected", "init_dispatched", "active", "completed", "failed"];
const MEMBER_STATES = ["active", "removed", "failed"];
const PHASE_STATES = ["pending", "dispatched", "completed", "failed", "skipped", "superseded"];

export async function createBatchTables(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("batches")
    .addColumn("id", "integer", (col) => col.primaryKey().generatedAlwaysAsIdentity())
    .addColumn("runbook_id", "integer", (col) => col.notNull().references("runbooks.id"))
    .addColumn("batch_start_time", "timestamptz")
    .addColumn("status", "text", (col) =>
      col.notNull().defaultTo("detected").check(inList("status", BATCH_STATES)),
    )
    .addColumn("detected_at", "timestamptz", (col) => col.notNull().defaultTo(now))
    .addColumn("init_dispatched_at", "timestamptz")
    .addColumn("is_manual", "boolean", (col) => col.notNull().defaultTo(false))
    .addColumn("created_by", "text")
    .addColumn("current_phase", "text")
    .execute();
  await db.schema.createIndex("batches_status_idx").on("batches").column("status").execute();
  await db.schema
    .createIndex("batches_runbook_status_idx")
    .on("batches")
    .columns(["runbook_id", "status"])
    .execute();

  await db.schema
    .createTable("batch_members")
    .addColumn("id", "integer", (col) => col.primaryKey().generatedAlwaysAsIdentity())
    .addColumn("batch_id", "integer", (col) => col.notNull().references("batches.id"))
    .addColumn("member_key", "text", (col) => col.notNull())
    .addColumn("data_json", "jsonb", (col) => col.notNull().defaultTo(emptyJsonObject))
    .addColumn("worker_data_json", "jsonb", (col) => col.notNull().defaultTo(emptyJsonObject))
    .addColumn("status", "text", (col) =>
      col.notNull().defaultTo("active").check(inList("status", MEMBER_STATES)),
    )
    .addColumn("added_at", "timestamptz", (col) => col.notNull().defaultTo(now))
    .addColumn("removed_at", "timestamptz")
    .addColumn("failed_at", "timestamptz")
    .addColumn("add_dispatched_at", "timestamptz")
    .addColumn("remove_dispatched_at", "timestamptz")
    .execute();
  // A key may come back after removal (a new row), but is active at most once per batch.
  await db.schema
    .createIndex("batch_members_one_active_per_key")
    .on("batch_members")
    .columns(["batch_id", "member_key"])
    .unique()
    .where(sql.ref("status"), "=", "active")
    .execute();
  await db.schema
    .createIndex("batch_members_batch_status_idx")
    .on("batch_members")
    .columns(["batch_id", "status"])
    .execute();

  await db.schema
    .createTable("phase_executions")
    .addColumn("id", "integer", (col) => col.primaryKey().generatedAlwaysAsIdentity())
    .addColumn("batch_id", "integer", (col) => col.notNull().references("batches.id"))
    .addColumn("phase_name", "text", (col) => col.notNull())
    .addColumn("sequence", "integer", (col) => col.notNull())
    .addColumn("offset_minutes", "integer", (col) => col.notNull())
    .addColumn("due_at", "timestamptz")
    .addColumn("runbook_version", "integer", (col) => col.notNull())
    .addColumn("status", "text", (col) =>
      col.notNull().defaultTo("pending").check(inList("status", PHASE_STATES)),
    )
    .addColumn("dispatched_at", "timestamptz")
    .addColumn("completed_at", "timestamptz")
    .addUniqueConstraint("phase_executions_batch_phase_version_key", [
      "batch_id",
      "phase_name",
      "runbook_version",
    ])
    .execute();
  await db.schema
    .createIndex("phase_executions_batch_sequence_idx")
    .on("phase_executions")
    .columns(["batch_id", "sequence"])
    .execute();
  // The scheduler's "which phases are due" scan only ever looks at pending phases.
  await db.schema
    .createIndex("phase_executions_pending_due_idx")
    .on("phase_executions")
    .column("due_at")
    .where(sql.ref("status"), "=", "pending")
    .execute();
}

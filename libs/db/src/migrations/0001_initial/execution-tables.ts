import { sql, type CreateTableBuilder, type Kysely } from "kysely";
import { emptyJsonObject, inList, now } from "./ddl-helpers.ts";

// Frozen copy of executionMachine's states as of this migration; db-schema.test.ts checks it.
const EXECUTION_STATES = [
  "pending",
  "dispatched",
  "succeeded",
  "failed",
  "polling",
  "poll_timeout",
  "cancelled",
];

/** The columns step_executions and init_executions share (000: "same columns as step_executions"). */
function withExecutionColumns<TB extends string>(
  table: CreateTableBuilder<TB>,
): CreateTableBuilder<TB, string> {
  return table
    .addColumn("id", "integer", (col) => col.primaryKey().generatedAlwaysAsIdentity())
    .addColumn("batch_id", "integer", (col) => col.notNull().references("batches.id"))
    .addColumn("step_name", "text", (col) => col.notNull())
    .addColumn("step_index", "integer", (col) => col.notNull())
    .addColumn("worker_id", "text", (col) => col.notNull())
    .addColumn("function_name", "text", (col) => col.notNull())
    .addColumn("params_json", "jsonb", (col) => col.notNull().defaultTo(emptyJsonObject))
    .addColumn("params_resolved", "boolean", (col) => col.notNull().defaultTo(false))
    .addColumn("status", "text", (col) =>
      col.notNull().defaultTo("pending").check(inList("status", EXECUTION_STATES)),
    )
    .addColumn("job_id", "text")
    .addColumn("result_json", "jsonb")
    .addColumn("error_message", "text")
    .addColumn("error_code", "text")
    .addColumn("dispatched_at", "timestamptz")
    .addColumn("completed_at", "timestamptz")
    .addColumn("is_poll_step", "boolean", (col) => col.notNull().defaultTo(false))
    .addColumn("poll_interval_sec", "integer")
    .addColumn("poll_timeout_sec", "integer")
    .addColumn("poll_started_at", "timestamptz")
    .addColumn("last_polled_at", "timestamptz")
    .addColumn("poll_count", "integer", (col) => col.notNull().defaultTo(0))
    .addColumn("on_failure", "text")
    .addColumn("retry_count", "integer", (col) => col.notNull().defaultTo(0))
    .addColumn("max_retries", "integer", (col) => col.notNull().defaultTo(0))
    .addColumn("retry_interval_sec", "integer")
    .addColumn("retry_after", "timestamptz")
    .addColumn("timeout_sec", "integer")
    .addColumn("created_at", "timestamptz", (col) => col.notNull().defaultTo(now));
}

export async function createExecutionTables(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("step_executions")
    .$call(withExecutionColumns)
    .addColumn("phase_execution_id", "integer", (col) => col.notNull().references("phase_executions.id"))
    .addColumn("batch_member_id", "integer", (col) => col.notNull().references("batch_members.id"))
    // A duplicate phase-due creates nothing twice; this also serves "steps of a phase in order".
    .addUniqueConstraint("step_executions_phase_member_index_key", [
      "phase_execution_id",
      "batch_member_id",
      "step_index",
    ])
    .execute();
  await db.schema
    .createIndex("step_executions_member_status_idx")
    .on("step_executions")
    .columns(["batch_member_id", "status"])
    .execute();
  await db.schema
    .createIndex("step_executions_batch_id_idx")
    .on("step_executions")
    .columns(["batch_id", "id"])
    .execute();
  await db.schema.createIndex("step_executions_job_id_idx").on("step_executions").column("job_id").execute();
  await db.schema
    .createIndex("step_executions_polling_idx")
    .on("step_executions")
    .column("last_polled_at")
    .where(sql.ref("status"), "=", "polling")
    .execute();

  await db.schema
    .createTable("init_executions")
    .$call(withExecutionColumns)
    .addColumn("runbook_version", "integer", (col) => col.notNull())
    // Also serves "init steps of a batch version in order".
    .addUniqueConstraint("init_executions_batch_version_index_key", [
      "batch_id",
      "runbook_version",
      "step_index",
    ])
    .execute();
  await db.schema.createIndex("init_executions_job_id_idx").on("init_executions").column("job_id").execute();
  await db.schema
    .createIndex("init_executions_polling_idx")
    .on("init_executions")
    .column("last_polled_at")
    .where(sql.ref("status"), "=", "polling")
    .execute();
}

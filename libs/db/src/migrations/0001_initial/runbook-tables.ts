import { sql, type Kysely } from "kysely";
import { inList, now } from "./ddl-helpers.ts";

export async function createRunbookTables(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("runbooks")
    .addColumn("id", "integer", (col) => col.primaryKey().generatedAlwaysAsIdentity())
    .addColumn("name", "text", (col) => col.notNull())
    .addColumn("version", "integer", (col) => col.notNull().check(sql`version > 0`))
    .addColumn("yaml_content", "text", (col) => col.notNull())
    .addColumn("data_table_name", "text")
    .addColumn("is_active", "boolean", (col) => col.notNull().defaultTo(false))
    .addColumn("overdue_behavior", "text", (col) =>
      col
        .notNull()
        .defaultTo("rerun")
        .check(inList("overdue_behavior", ["rerun", "ignore"])),
    )
    .addColumn("ignore_overdue_applied", "boolean", (col) => col.notNull().defaultTo(false))
    .addColumn("rerun_init", "boolean", (col) => col.notNull().defaultTo(false))
    .addColumn("created_at", "timestamptz", (col) => col.notNull().defaultTo(now))
    .addColumn("last_error", "text")
    .addColumn("last_error_at", "timestamptz")
    .addUniqueConstraint("runbooks_name_version_key", ["name", "version"])
    .execute();
  // One active version per name, enforced by the database rather than by publish's care alone.
  await db.schema
    .createIndex("runbooks_one_active_per_name")
    .on("runbooks")
    .column("name")
    .unique()
    .where(sql.ref("is_active"), "=", true)
    .execute();

  await db.schema
    .createTable("runbook_automation_settings")
    .addColumn("runbook_name", "text", (col) => col.primaryKey())
    .addColumn("automation_enabled", "boolean", (col) => col.notNull().defaultTo(false))
    .addColumn("enabled_at", "timestamptz")
    .addColumn("enabled_by", "text")
    .addColumn("disabled_at", "timestamptz")
    .addColumn("disabled_by", "text")
    .execute();
}

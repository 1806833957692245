import { sql, type Kysely, type Migration } from "kysely";
import { inList } from "./0001_initial/ddl-helpers.ts";

// Frozen copies of the machines' states as of this migration (a later state needs a new
// migration); 0001_initial.test.ts checks the latest ones still match libs/domain.
const BATCH_STATES_BEFORE = ["detected", "init_dispatched", "active", "completed", "failed", "cancelled"];
const BATCH_STATES = [...BATCH_STATES_BEFORE, "paused"];
/** How an ended phase or batch went for its members (issue 12); null while it runs or when cancelled. */
const OUTCOMES = ["succeeded", "partially_succeeded", "failed"];

/**
 * Operations (issue 12): `paused` batches; the outcome of an ended phase or batch with its member
 * counts; a redrive counter on executions (part of their job ids, so a redriven step never reuses
 * a job id the worker remembers); the acting identity of an operator's write on its event, with
 * the index the audit page reads.
 */
export const operationsMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await replaceStatusCheck(db, "batches", BATCH_STATES);
    for (const table of ["batches", "phase_executions"]) {
      await db.schema
        .alterTable(table)
        .addColumn("outcome", "text", (col) => col.check(inList("outcome", OUTCOMES)))
        .addColumn("succeeded_members", "integer")
        .addColumn("failed_members", "integer")
        .execute();
    }
    for (const table of ["step_executions", "init_executions"]) {
      await db.schema
        .alterTable(table)
        .addColumn("redrive_count", "integer", (col) => col.notNull().defaultTo(0))
        .execute();
    }
    await db.schema.alterTable("events").addColumn("actor", "text").execute();
    // The audit trail: operators' writes only, newest last, read by id ranges.
    await db.schema
      .createIndex("events_audit_idx")
      .on("events")
      .column("id")
      .where(sql.ref("actor"), "is not", null)
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropIndex("events_audit_idx").ifExists().execute();
    await db.schema.alterTable("events").dropColumn("actor").execute();
    for (const table of ["step_executions", "init_executions"]) {
      await db.schema.alterTable(table).dropColumn("redrive_count").execute();
    }
    for (const table of ["batches", "phase_executions"]) {
      await db.schema
        .alterTable(table)
        .dropColumn("outcome")
        .dropColumn("succeeded_members")
        .dropColumn("failed_members")
        .execute();
    }
    // Fails while a paused batch exists: resume or cancel it first.
    await replaceStatusCheck(db, "batches", BATCH_STATES_BEFORE);
  },
};

/** Same constraint name as 0001 created (PostgreSQL's `<table>_status_check`), new list. */
async function replaceStatusCheck(
  db: Kysely<unknown>,
  table: string,
  states: readonly string[],
): Promise<void> {
  const name = `${table}_status_check`;
  await db.schema.alterTable(table).dropConstraint(name).execute();
  await db.schema.alterTable(table).addCheckConstraint(name, inList("status", states)).execute();
}

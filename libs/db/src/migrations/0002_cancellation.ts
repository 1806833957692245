import { sql, type Kysely, type Migration } from "kysely";
import { inList } from "./0001_initial/ddl-helpers.ts";

// Frozen copies of the machines' states as of this migration (a later state needs a new
// migration); 0001_initial.test.ts checks the latest ones still match libs/domain.
const BATCH_STATES_BEFORE = ["detected", "init_dispatched", "active", "completed", "failed"];
const PHASE_STATES_BEFORE = ["pending", "dispatched", "completed", "failed", "skipped", "superseded"];
const BATCH_STATES = [...BATCH_STATES_BEFORE, "cancelled"];
const PHASE_STATES = [...PHASE_STATES_BEFORE, "cancelled"];

/**
 * Batch cancellation (not in 000): `cancelled` batches and phases. Also the indexes of two
 * orchestrator scans: stuck executions (dispatched, no result past their timeout) and the
 * rollback annotations the steps API reads.
 */
export const cancellationMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await replaceStatusCheck(db, "batches", BATCH_STATES);
    await replaceStatusCheck(db, "phase_executions", PHASE_STATES);
    for (const table of ["step_executions", "init_executions"]) {
      // Only rows in flight: small however long the table's history.
      await db.schema
        .createIndex(`${table}_dispatched_idx`)
        .on(table)
        .column("dispatched_at")
        .where(sql.ref("status"), "=", "dispatched")
        .execute();
    }
    // Annotation events (from_status = to_status), e.g. rollback dispatches: a few per failed step.
    await db.schema
      .createIndex("events_annotations_idx")
      .on("events")
      .columns(["batch_id", "entity", "entity_id"])
      .where(sql<boolean>`from_status = to_status`)
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropIndex("events_annotations_idx").ifExists().execute();
    await db.schema.dropIndex("init_executions_dispatched_idx").ifExists().execute();
    await db.schema.dropIndex("step_executions_dispatched_idx").ifExists().execute();
    // Fails while a cancelled batch or phase exists: there is no earlier status to put it back in.
    await replaceStatusCheck(db, "phase_executions", PHASE_STATES_BEFORE);
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

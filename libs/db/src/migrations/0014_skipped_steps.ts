import type { Kysely, Migration } from "kysely";
import { inList } from "./0001_initial/ddl-helpers.ts";

// Frozen copies of the execution machine's states as of this migration (a later state needs a
// new migration); 0001_initial.test.ts checks the latest ones still match libs/domain.
const EXECUTION_STATES_BEFORE = [
  "pending",
  "dispatched",
  "succeeded",
  "failed",
  "polling",
  "poll_timeout",
  "cancelled",
];
const EXECUTION_STATES = [...EXECUTION_STATES_BEFORE, "skipped"];
const TABLES = ["step_executions", "init_executions"];

/**
 * `skipped` steps (issue 30): a phase step whose `when:` condition was false when its turn came.
 * Init executions share the machine and the constraint, though none is ever skipped. No index
 * changes: the partial indexes on open steps (pending, dispatched, polling) leave skipped ones out
 * as they leave out every terminal status.
 */
export const skippedStepsMigration: Migration = {
  async up(db: Kysely<unknown>) {
    for (const table of TABLES) await replaceStatusCheck(db, table, EXECUTION_STATES);
  },
  async down(db: Kysely<unknown>) {
    // Fails while a skipped step exists: there is no earlier status to put it back in.
    for (const table of TABLES) await replaceStatusCheck(db, table, EXECUTION_STATES_BEFORE);
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

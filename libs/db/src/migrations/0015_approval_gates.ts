import { sql, type Kysely, type Migration } from "kysely";
import { inList } from "./0001_initial/ddl-helpers.ts";

// Frozen copies of the phase machine's states as of this migration (a later state needs a new
// migration); 0001_initial.test.ts checks the latest ones still match libs/domain.
const PHASE_STATES_BEFORE = [
  "pending",
  "dispatched",
  "completed",
  "failed",
  "skipped",
  "superseded",
  "cancelled",
];
const PHASE_STATES = [...PHASE_STATES_BEFORE, "awaiting_approval"];

/**
 * Approval gates on phases (issue 30). The gate is copied from the runbook onto the phase row when
 * the row is created, like its offset: the dispatchers (admin API, scheduler, batch workflow) and
 * the timeout decide from the row alone, and a later runbook version gets rows of its own.
 * - `approval_required`, `approval_timeout_seconds`, `approval_timeout_outcome`: the runbook's keys;
 * - `approval_expires_at`: stamped when the phase starts waiting (now + timeout), read by the batch
 *   workflow, whose timer wakes it then; in PostgreSQL, so a restart forgets nothing;
 * - `approval_decision`: how the wait ended, so a rejected phase (status `failed`, no steps) is
 *   never mistaken for one that ran (a redrive does not reopen it).
 * The CHECKs keep the status honest: only a gated phase waits, and only while undecided.
 */
export const approvalGatesMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`
      ALTER TABLE phase_executions
        ADD COLUMN approval_required boolean NOT NULL DEFAULT false,
        ADD COLUMN approval_timeout_seconds integer CHECK (approval_timeout_seconds > 0),
        ADD COLUMN approval_timeout_outcome text CHECK (approval_timeout_outcome IN ('approve', 'reject')),
        ADD COLUMN approval_expires_at timestamptz,
        ADD COLUMN approval_decision text CHECK (approval_decision IN ('approved', 'rejected'))`.execute(db);
    await replaceStatusCheck(db, PHASE_STATES);
    await sql`
      ALTER TABLE phase_executions ADD CONSTRAINT phase_executions_approval_check CHECK (
        status <> 'awaiting_approval' OR (approval_required AND approval_decision IS NULL)
      )`.execute(db);
  },
  async down(db: Kysely<unknown>) {
    await sql`ALTER TABLE phase_executions DROP CONSTRAINT IF EXISTS phase_executions_approval_check`.execute(
      db,
    );
    // Fails while a phase awaits approval: approve, reject or cancel it first.
    await replaceStatusCheck(db, PHASE_STATES_BEFORE);
    await sql`
      ALTER TABLE phase_executions
        DROP COLUMN approval_required,
        DROP COLUMN approval_timeout_seconds,
        DROP COLUMN approval_timeout_outcome,
        DROP COLUMN approval_expires_at,
        DROP COLUMN approval_decision`.execute(db);
  },
};

/** Same constraint name as 0001 created (PostgreSQL's `<table>_status_check`), new list. */
async function replaceStatusCheck(db: Kysely<unknown>, states: readonly string[]): Promise<void> {
  const name = "phase_executions_status_check";
  await db.schema.alterTable("phase_executions").dropConstraint(name).execute();
  await db.schema.alterTable("phase_executions").addCheckConstraint(name, inList("status", states)).execute();
}

import { sql, type Kysely, type Migration } from "kysely";
import { inList } from "./0001_initial/ddl-helpers.ts";

// Frozen copies as of this migration: events.entity before, and with alert rows.
const ENTITIES_BEFORE = ["batch", "member", "phase", "step", "init", "runbook", "automation", "webhook"];
const ENTITIES = [...ENTITIES_BEFORE, "alert"];

/**
 * Alerts (issue 31, libs/domain/src/alerts): one row per occurrence of a condition on a subject
 * (`runbook:<name>`, `batch:<id>`, `subscription:<topic>/<name>`…), raised once and resolved once.
 * The partial unique index is what makes "once" hold even when two evaluators run at the same
 * time: a second raise of an open (condition, subject) inserts nothing. `details` holds counts
 * and reason codes only, never member data.
 *
 * runbooks.consecutive_failures counts the scheduler's failed ticks since the last good one (the
 * `source-failing` condition); last_error alone says nothing about how long it has been failing.
 */
export const alertsMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`
      CREATE TABLE alerts (
        id bigserial PRIMARY KEY,
        condition_id text NOT NULL,
        severity text NOT NULL CHECK (severity IN ('critical', 'warning')),
        subject text NOT NULL,
        runbook_name text,
        batch_id integer REFERENCES batches (id) ON DELETE SET NULL,
        details jsonb NOT NULL DEFAULT '{}'::jsonb,
        raised_at timestamptz NOT NULL DEFAULT now(),
        resolved_at timestamptz
      )`.execute(db);
    await sql`CREATE UNIQUE INDEX alerts_open_key ON alerts (condition_id, subject) WHERE resolved_at IS NULL`.execute(
      db,
    );
    await sql`CREATE INDEX alerts_raised_idx ON alerts (raised_at DESC)`.execute(db);
    await sql`ALTER TABLE runbooks ADD COLUMN consecutive_failures integer NOT NULL DEFAULT 0`.execute(db);
    await replaceEntityCheck(db, ENTITIES);
  },
  async down(db: Kysely<unknown>) {
    await sql`DELETE FROM events WHERE entity = 'alert'`.execute(db);
    await replaceEntityCheck(db, ENTITIES_BEFORE);
    await sql`ALTER TABLE runbooks DROP COLUMN consecutive_failures`.execute(db);
    await sql`DROP TABLE alerts`.execute(db);
  },
};

async function replaceEntityCheck(db: Kysely<unknown>, entities: readonly string[]): Promise<void> {
  await db.schema.alterTable("events").dropConstraint("events_entity_check").execute();
  await db.schema
    .alterTable("events")
    .addCheckConstraint("events_entity_check", inList("entity", entities))
    .execute();
}

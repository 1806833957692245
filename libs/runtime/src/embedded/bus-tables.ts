import type pg from "pg";

/** pg-boss's own schema (its default); our SQL that reads its tables names it explicitly. */
export const bossSchema = "pgboss";
/**
 * Our bus bookkeeping, beside pg-boss rather than inside its schema so its migrations never meet
 * ours (one index of ours sits on its job table: see `matoolkit_job_fetch_order`).
 */
export const busSchema = "matoolkit_bus";

/**
 * - `subscriptions`: durable subscriptions (topic, name, equality filter → pg-boss queue), so a
 *   process that never subscribed can still fan a message out to every matching subscription.
 * - `dedupe_keys`: one row per (topic, message id) while the duplicate-detection window is open;
 * - an index on pg-boss's job table in its fetch order (installed after pg-boss's own schema).
 * Every statement is idempotent: this runs at every start of every process.
 */
const statements = [
  `CREATE SCHEMA IF NOT EXISTS ${busSchema}`,
  `CREATE TABLE IF NOT EXISTS ${busSchema}.subscriptions (
     topic text NOT NULL,
     name text NOT NULL,
     filter jsonb NOT NULL DEFAULT '{}'::jsonb,
     queue text NOT NULL,
     created_at timestamptz NOT NULL DEFAULT now(),
     updated_at timestamptz NOT NULL DEFAULT now(),
     PRIMARY KEY (topic, name)
   )`,
  `CREATE TABLE IF NOT EXISTS ${busSchema}.dedupe_keys (
     topic text NOT NULL,
     message_id text NOT NULL,
     expires_at timestamptz NOT NULL,
     PRIMARY KEY (topic, message_id)
   )`,
  `CREATE INDEX IF NOT EXISTS dedupe_keys_expires_at ON ${busSchema}.dedupe_keys (expires_at)`,
  // pg-boss fetches `ORDER BY priority DESC, created_on, id LIMIT n` from its index on
  // (name, start_after) (plans.js `fetchNextJob`, `job_i5`): every fetch reads and sorts the whole
  // queue, O(queued jobs). A 10,000-member phase queues 10,000 jobs at once, and that sort was the
  // most frequent statement on PostgreSQL's CPU (issue 29). In the fetch's order, the first
  // eligible rows are read and the scan stops: 11 ms → 0.07 ms per fetch at 20,000 queued jobs
  // (EXPLAIN ANALYZE). On the partitioned parent, so every queue's partition gets it, also those
  // pg-boss creates later. Ours, named apart from pg-boss's indexes, beside its schema.
  `CREATE INDEX IF NOT EXISTS matoolkit_job_fetch_order ON ${bossSchema}.job (name, priority DESC, created_on, id)
     WHERE state < 'active'`,
];

/** `CREATE … IF NOT EXISTS` still races in the catalog when two processes start at once: serialize. */
export async function installBusTables(client: pg.ClientBase): Promise<void> {
  await client.query("BEGIN");
  try {
    await client.query("SELECT pg_advisory_xact_lock(hashtext('matoolkit_bus.install'))");
    for (const statement of statements) await client.query(statement);
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK");
    throw error;
  }
}

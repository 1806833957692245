import type pg from "pg";

/** pg-boss's own schema (its default); our SQL that reads its tables names it explicitly. */
export const bossSchema = "pgboss";
/**
 * Our bus bookkeeping, beside pg-boss rather than inside its schema so its migrations never meet
 * ours (one index of ours sits on its job table: see `matoolkit_job_fetch_order`).
 */
export const busSchema = "matoolkit_bus";

/**
 * One object of ours and the statement that creates it: `name` as `to_regnamespace` (a schema) or
 * `to_regclass` (a table or an index) reads it.
 */
interface BusObject {
  readonly kind: "schema" | "relation";
  readonly name: string;
  readonly create: string;
}

/**
 * - `subscriptions`: durable subscriptions (topic, name, equality filter → pg-boss queue), so a
 *   process that never subscribed can still fan a message out to every matching subscription.
 * - `dedupe_keys`: one row per (topic, message id) while the duplicate-detection window is open;
 * - an index on pg-boss's job table in its fetch order (installed after pg-boss's own schema).
 * In the order they depend on each other.
 */
const objects: readonly BusObject[] = [
  { kind: "schema", name: busSchema, create: `CREATE SCHEMA IF NOT EXISTS ${busSchema}` },
  {
    kind: "relation",
    name: `${busSchema}.subscriptions`,
    create: `CREATE TABLE IF NOT EXISTS ${busSchema}.subscriptions (
     topic text NOT NULL,
     name text NOT NULL,
     filter jsonb NOT NULL DEFAULT '{}'::jsonb,
     queue text NOT NULL,
     created_at timestamptz NOT NULL DEFAULT now(),
     updated_at timestamptz NOT NULL DEFAULT now(),
     PRIMARY KEY (topic, name)
   )`,
  },
  {
    kind: "relation",
    name: `${busSchema}.dedupe_keys`,
    create: `CREATE TABLE IF NOT EXISTS ${busSchema}.dedupe_keys (
     topic text NOT NULL,
     message_id text NOT NULL,
     expires_at timestamptz NOT NULL,
     PRIMARY KEY (topic, message_id)
   )`,
  },
  {
    kind: "relation",
    name: `${busSchema}.dedupe_keys_expires_at`,
    create: `CREATE INDEX IF NOT EXISTS dedupe_keys_expires_at ON ${busSchema}.dedupe_keys (expires_at)`,
  },
  {
    // pg-boss fetches `ORDER BY priority DESC, created_on, id LIMIT n` from its index on
    // (name, start_after) (plans.js `fetchNextJob`, `job_i5`): every fetch reads and sorts the whole
    // queue, O(queued jobs). A 10,000-member phase queues 10,000 jobs at once, and that sort was the
    // most frequent statement on PostgreSQL's CPU (issue 29). In the fetch's order, the first
    // eligible rows are read and the scan stops: 11 ms → 0.07 ms per fetch at 20,000 queued jobs
    // (EXPLAIN ANALYZE). On the partitioned parent, so every queue's partition gets it, also those
    // pg-boss creates later. Ours, named apart from pg-boss's indexes, beside its schema.
    kind: "relation",
    name: `${bossSchema}.matoolkit_job_fetch_order`,
    create: `CREATE INDEX IF NOT EXISTS matoolkit_job_fetch_order ON ${bossSchema}.job (name, priority DESC, created_on, id)
     WHERE state < 'active'`,
  },
];

/**
 * Creates what is missing of {@link objects}; runs at every start of every process.
 *
 * Only what is missing, each in a transaction of its own: `CREATE … IF NOT EXISTS` takes its
 * lock before it looks (a `CREATE INDEX` a share lock on the table), so at every start it queued
 * behind the running system's writes and, in one transaction, held one table's lock while waiting
 * for the next: a process starting while another published (an index on `dedupe_keys` held, the
 * one on pgboss.job awaited; the publisher holding pgboss.job and awaiting `dedupe_keys`) died of
 * a deadlock (seen in the malformed-messages drill). Reading the catalog takes no such lock, and a
 * transaction with one statement holds nothing while it waits. The advisory lock serializes two
 * processes creating at once (`CREATE … IF NOT EXISTS` still races in the catalog).
 */
export async function installBusTables(client: pg.ClientBase): Promise<void> {
  for (const object of await missingObjects(client, objects)) {
    await client.query("BEGIN");
    try {
      await client.query("SELECT pg_advisory_xact_lock(hashtext('matoolkit_bus.install'))");
      await client.query(object.create);
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK");
      throw error;
    }
  }
}

/** The objects the catalog does not know, in their order. */
async function missingObjects(client: pg.ClientBase, wanted: readonly BusObject[]): Promise<BusObject[]> {
  const { rows } = await client.query<{ missing: boolean[] }>(
    `SELECT array_agg(CASE kind WHEN 'schema' THEN to_regnamespace(name) IS NULL ELSE to_regclass(name) IS NULL END
                      ORDER BY position) AS missing
     FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS o(kind, name, position)`,
    [wanted.map((object) => object.kind), wanted.map((object) => object.name)],
  );
  const missing = rows[0]?.missing ?? [];
  return wanted.filter((_, index) => missing[index] !== false);
}

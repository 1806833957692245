import type pg from "pg";

/** pg-boss's own schema (its default); our SQL that reads its tables names it explicitly. */
export const bossSchema = "pgboss";
/**
 * Our bus bookkeeping, beside pg-boss rather than inside its schema so its migrations never meet
 * ours (one index of ours sits on its job table: see `matoolkit_job_due_order`).
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
 * - an index on pg-boss's job table in the order our fetches hand jobs out (installed after
 *   pg-boss's own schema).
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
    // Every fetch and take of a subscription queue hands its jobs out in due order (take-jobs.ts):
    // this index is that order, whole, so a fetch reads the first due jobs and stops at its limit,
    // ties of one publish included (they share `start_after` and `created_on`; the ids are in
    // publish order, ordered-job-id.ts). pg-boss's own fetch index on (name, start_after) INCLUDE
    // (…) is dropped from subscription queues (queue-fetch-index.ts): with it, a publish of 3,000
    // jobs at once was read and sorted whole by each fetch. On the partitioned parent, so every
    // queue's partition gets it, also those pg-boss creates later. Ours, named apart from
    // pg-boss's indexes, beside its schema.
    kind: "relation",
    name: `${bossSchema}.matoolkit_job_due_order`,
    create: `CREATE INDEX IF NOT EXISTS matoolkit_job_due_order ON ${bossSchema}.job (name, start_after, created_on, id)
     WHERE state < 'active'`,
  },
];

/**
 * What earlier versions created and this one drops: `matoolkit_job_fetch_order`, on pg-boss's job
 * table in pg-boss's fetch order (priority DESC, created_on, id). Our fetches now go in due order
 * through `matoolkit_job_due_order` (issue 29: one index entry fewer per message).
 */
const retired: ReadonlyArray<Omit<BusObject, "create"> & { readonly drop: string }> = [
  {
    kind: "relation",
    name: `${bossSchema}.matoolkit_job_fetch_order`,
    drop: `DROP INDEX IF EXISTS ${bossSchema}.matoolkit_job_fetch_order`,
  },
];

/**
 * How long a drop of a retired object waits for the running system's locks (a `DROP INDEX` on
 * pg-boss's partitioned job table locks it whole, and every publish and fetch queues behind it
 * while it waits): if it cannot have them by then, it gives up, to be tried at the next start.
 */
export const retireLockTimeout = "1s";

/**
 * Runs `drop` (which sets `lock_timeout` to {@link retireLockTimeout} in its transaction) and
 * ignores its lock timing out (PostgreSQL's SQLSTATE 55P03): what it would drop stays, costing
 * writes, not correctness, until a later start tries again. Any other error is thrown.
 */
export async function dropUnlessBusy(drop: () => Promise<void>): Promise<void> {
  await drop().catch((error: unknown) => {
    if ((error as { code?: string }).code !== "55P03") throw error;
  });
}

/**
 * Creates what is missing of {@link objects}, and drops what is left of {@link retired}; runs at
 * every start of every process.
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
    await runAlone(client, object.create);
  }
  const left = new Set(await missingObjects(client, retired));
  for (const object of retired.filter((object) => !left.has(object))) {
    await dropUnlessBusy(() => runAlone(client, object.drop, retireLockTimeout));
  }
}

/** One statement in a transaction of its own, under the install's advisory lock. */
async function runAlone(client: pg.ClientBase, statement: string, lockTimeout?: string): Promise<void> {
  await client.query("BEGIN");
  try {
    await client.query("SELECT pg_advisory_xact_lock(hashtext('matoolkit_bus.install'))");
    if (lockTimeout !== undefined) await client.query(`SET LOCAL lock_timeout = '${lockTimeout}'`);
    await client.query(statement);
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK");
    throw error;
  }
}

/** The objects the catalog does not know, in their order. */
async function missingObjects<T extends Omit<BusObject, "create">>(
  client: pg.ClientBase,
  wanted: readonly T[],
): Promise<T[]> {
  const { rows } = await client.query<{ missing: boolean[] }>(
    `SELECT array_agg(CASE kind WHEN 'schema' THEN to_regnamespace(name) IS NULL ELSE to_regclass(name) IS NULL END
                      ORDER BY position) AS missing
     FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS o(kind, name, position)`,
    [wanted.map((object) => object.kind), wanted.map((object) => object.name)],
  );
  const missing = rows[0]?.missing ?? [];
  return wanted.filter((_, index) => missing[index] !== false);
}

import { sql } from "kysely";
import type { AnyKysely } from "../any-kysely.ts";
import { bossSchema } from "./bus-tables.ts";

/**
 * How full an insert may leave a page of a subscription queue's table (PostgreSQL's `fillfactor`,
 * percent). The rest is kept for the rows' next versions.
 *
 * Why (issue 29, WAL per step): a job row is written whole three times — inserted, updated to
 * `active` by the fetch, deleted on completion. The fetch's update changes `state`, which
 * pg-boss's partial indexes test, so it is never HOT; but when the new version fits on the same
 * page, PostgreSQL logs only the bytes that changed between the common prefix and suffix of the
 * two versions (`log_heap_update`, src/backend/access/heap/heapam.c: "If the old and new tuple are
 * on the same page, we only need to log the parts of the new tuple that were changed"). pg-boss's
 * columns put `data` (the message, most of the row) before `state` (plans.js `createTableJob`), so
 * on the same page the update logs ~100 bytes instead of the whole ~750-byte row. At the default
 * (100) inserts fill each page and every fetch moves its rows to another page.
 *
 * At 50, a page filled by inserts still has room for a new version of each of its rows; the
 * completion deletes them, and the space comes back at the next prune. Queue tables hold only what
 * is waiting or running, so the space costs nothing that lasts.
 */
export const QUEUE_FILL_FACTOR = 50;

/**
 * Sets {@link QUEUE_FILL_FACTOR} on the table pg-boss keeps the queue's jobs in (a partition of
 * `pgboss.job`; PostgreSQL refuses storage parameters on the partitioned parent, so each
 * partition gets its own). Only when it differs: every process declares its subscriptions at
 * start, and the ALTER takes a lock that waits for a running VACUUM. Applies to pages filled from
 * now on.
 */
export async function setQueueFillFactor(db: AnyKysely, queue: string): Promise<void> {
  const { rows } = await sql<{ table: string; fillFactor: string | null }>`
    SELECT c.relname AS "table",
           (SELECT split_part(o, '=', 2) FROM unnest(c.reloptions) AS o WHERE o LIKE 'fillfactor=%') AS "fillFactor"
    FROM ${sql.table(`${bossSchema}.queue`)} AS q
    JOIN pg_catalog.pg_class AS c ON c.relname = q.partition_name
    JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace AND n.nspname = ${bossSchema}
    WHERE q.name = ${queue}`.execute(db);
  const partition = rows[0];
  if (partition === undefined) throw new Error(`pg-boss has no table for queue ${queue}`);
  if (partition.fillFactor === String(QUEUE_FILL_FACTOR)) return;
  await sql`ALTER TABLE ${sql.table(`${bossSchema}.${partition.table}`)} SET (fillfactor = ${sql.lit(QUEUE_FILL_FACTOR)})`.execute(
    db,
  );
}

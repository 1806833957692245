import { sql } from "kysely";
import type { AnyKysely } from "../any-kysely.ts";
import { bossSchema, dropUnlessBusy, retireLockTimeout } from "./bus-tables.ts";

/**
 * Drops pg-boss's fetch index from a subscription queue's table, where nothing reads it.
 *
 * pg-boss creates, for every queue's partition of `pgboss.job`, an index on (name, start_after)
 * INCLUDE (priority, created_on, id) WHERE state < 'active' (`job_i5`, `createIndexJobFetch` in
 * node_modules/pg-boss/src/plans.js), for its own fetch. A subscription queue is fetched and taken
 * only by our statements (take-jobs.ts), in due order through `matoolkit_job_due_order`
 * (bus-tables.ts), which orders ties too. Every message paid an entry in both: ~175 bytes of WAL
 * per message for this one (issue 29, `BENCH_WAL_BREAKDOWN=1`). pg-boss's maintenance reads
 * neither (it finds expired and retained jobs by state and times, partition by partition). Other
 * queues (dead letters, timers) keep theirs: pg-boss's own fetch reads them.
 *
 * Only when it is there: every process declares its subscriptions at start. The drop locks the
 * queue's table, so it waits for publishes into it at most `retireLockTimeout`, then gives up
 * until the next declaration: the index costs writes, not correctness.
 */
export async function dropPgBossFetchIndex(db: AnyKysely, queue: string): Promise<void> {
  const { rows } = await sql<{ index: string | null }>`
    SELECT i.relname AS "index"
    FROM ${sql.table(`${bossSchema}.queue`)} AS q
    JOIN pg_catalog.pg_namespace AS n ON n.nspname = ${bossSchema}
    LEFT JOIN pg_catalog.pg_class AS i ON i.relnamespace = n.oid AND i.relname = q.partition_name || '_i5'
    WHERE q.name = ${queue}`.execute(db);
  const partition = rows[0];
  if (partition === undefined) throw new Error(`pg-boss has no table for queue ${queue}`);
  if (partition.index === null) return;
  const index = sql.table(`${bossSchema}.${partition.index}`);
  await dropUnlessBusy(() =>
    db.transaction().execute(async (trx) => {
      await sql`SET LOCAL lock_timeout = ${sql.lit(retireLockTimeout)}`.execute(trx);
      await sql`DROP INDEX IF EXISTS ${index}`.execute(trx);
    }),
  );
}

import { sql } from "kysely";
import type { AnyKysely } from "../any-kysely.ts";
import { bossSchema } from "./bus-tables.ts";
import type { QueueJob } from "./queue-consumer.ts";

interface TakenRow {
  readonly id: string;
  readonly data: unknown;
  readonly retry_count: number;
}

/**
 * Removes up to `limit` due jobs of `queue` and returns them, in the caller's transaction
 * (MessageBus.consumeInTransaction): the rows are gone at its commit and untouched after a
 * rollback, and until then `FOR UPDATE SKIP LOCKED` keeps other consumers off them, as pg-boss's
 * own fetch does (`fetchNextJob`, node_modules/pg-boss/src/plans.js: same selection, same order,
 * served by `matoolkit_job_fetch_order`). Where pg-boss's fetch rewrites each job to `active`
 * (a non-HOT update: its partial indexes test `state`) and the consumer deletes it once handled,
 * this is one delete (issue 29).
 *
 * `retryCount` is what pg-boss's fetch would have set: a job started before (delivered, then
 * failed or its lock expired) counts one more delivery; a batch that rolled back counted nothing.
 */
export async function takeJobs(trx: AnyKysely, queue: string, limit: number): Promise<QueueJob[]> {
  const job = sql.table(`${bossSchema}.job`);
  const { rows } = await sql<TakenRow>`
    WITH chosen AS MATERIALIZED (
      -- Chosen once, in a CTE: as \`id IN (subquery)\` PostgreSQL may run the subquery again for
      -- each row, and each run skips the rows the statement itself just deleted and locks more,
      -- past the LIMIT (seen here: a batch of 8 took 30).
      SELECT id FROM ${job}
      WHERE name = ${queue} AND state < 'active' AND start_after < now()
      ORDER BY priority DESC, created_on, id
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    ), taken AS (
      DELETE FROM ${job} AS j USING chosen
      WHERE j.name = ${queue} AND j.id = chosen.id
      RETURNING j.id, j.data, j.priority, j.created_on,
        CASE WHEN j.started_on IS NOT NULL THEN j.retry_count + 1 ELSE j.retry_count END AS retry_count
    )
    SELECT id, data, retry_count FROM taken ORDER BY priority DESC, created_on, id
  `.execute(trx);
  return rows.map(queueJobOf);
}

/**
 * The jobs of a batch whose transaction failed, marked `active` as pg-boss's fetch marks a job it
 * hands out (same columns, same retry count rule), so they go the ordinary way from here: the
 * queue consumer runs them one by one and completes, retries or dead-letters each, and pg-boss's
 * maintenance expires one whose consumer dies. Only jobs still queued: those the failed batch
 * consumed (it threw after its commit) or that another consumer took meanwhile are left out.
 */
export async function startJobsAgain(
  db: AnyKysely,
  queue: string,
  ids: readonly string[],
): Promise<QueueJob[]> {
  if (ids.length === 0) return [];
  const { rows } = await sql<TakenRow>`
    UPDATE ${sql.table(`${bossSchema}.job`)} SET
      state = 'active',
      started_on = now(),
      retry_count = CASE WHEN started_on IS NOT NULL THEN retry_count + 1 ELSE retry_count END
    WHERE name = ${queue} AND id = ANY(${[...ids]}::uuid[]) AND state < 'active'
    RETURNING id, data, retry_count
  `.execute(db);
  const byId = new Map(rows.map((row) => [row.id, row]));
  // In the order the batch had them.
  return ids.flatMap((id) => {
    const row = byId.get(id);
    return row === undefined ? [] : [queueJobOf(row)];
  });
}

function queueJobOf(row: TakenRow): QueueJob {
  return { id: row.id, data: row.data, retryCount: row.retry_count };
}

import { sql, type RawBuilder } from "kysely";
import type { AnyKysely } from "../any-kysely.ts";
import { bossSchema } from "./bus-tables.ts";
import type { TakeOnly } from "../ports/index.ts";
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
 * own fetch does (`fetchNextJob`, node_modules/pg-boss/src/plans.js: the same selection, in
 * `dueOrder`). Where a fetch rewrites each job to `active` (a non-HOT update: pg-boss's partial
 * indexes test `state`) and the consumer deletes it once handled, this is one delete (issue 29).
 *
 * With `only` (TransactionalSubscription.only), only the messages it names; the queue's other
 * messages stay for its fetching consumer.
 *
 * With `commitAsynchronously`, the caller's transaction commits without waiting for the disk
 * (TransactionalSubscription.commitAsynchronously).
 *
 * `retryCount` is what pg-boss's fetch would have set: a job started before (delivered, then
 * failed or its lock expired) counts one more delivery; a batch that rolled back counted nothing.
 */
export async function takeJobs(
  trx: AnyKysely,
  queue: string,
  limit: number,
  options: TakeOptions = {},
): Promise<QueueJob[]> {
  const { rows } = await takeJobsStatement(queue, limit, options).execute(trx);
  return rows.map(queueJobOf);
}

/** The statement of {@link takeJobs} (tests read its plan). */
export function takeJobsStatement(
  queue: string,
  limit: number,
  { only, commitAsynchronously = false }: TakeOptions = {},
): RawBuilder<TakenRow> {
  const job = sql.table(`${bossSchema}.job`);
  // set_config(…, true) is SET LOCAL: for the caller's transaction only, read at its commit. In
  // the select list, so it runs in this statement (a CTE nothing reads would not run); per row,
  // and not at all when nothing is taken, when the commit has nothing to flush.
  const commitSetting = commitAsynchronously
    ? sql`, set_config('synchronous_commit', 'off', true) AS synchronous_commit`
    : sql``;
  return sql<TakenRow>`
    WITH chosen AS MATERIALIZED (
      -- Chosen once, in a CTE: as \`id IN (subquery)\` PostgreSQL may run the subquery again for
      -- each row, and each run skips the rows the statement itself just deleted and locks more,
      -- past the LIMIT (seen here: a batch of 8 took 30).
      SELECT id FROM ${job}
      WHERE name = ${queue} AND state < 'active' AND start_after < now()
      ${only === undefined ? sql`` : sql`AND data -> 'properties' ->> ${only.property} = ANY(${[...only.values]}::text[])`}
      ORDER BY ${dueOrder}
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    ), taken AS (
      DELETE FROM ${job} AS j USING chosen
      WHERE j.name = ${queue} AND j.id = chosen.id
      RETURNING j.id, j.data, j.priority, j.start_after, j.created_on,
        CASE WHEN j.started_on IS NOT NULL THEN j.retry_count + 1 ELSE j.retry_count END AS retry_count
    )
    SELECT id, data, retry_count${commitSetting} FROM taken ORDER BY ${dueOrder}
  `;
}

export interface TakeOptions {
  /** TransactionalSubscription.only. */
  readonly only?: TakeOnly | undefined;
  /** TransactionalSubscription.commitAsynchronously: the caller's transaction commits without the flush. */
  readonly commitAsynchronously?: boolean | undefined;
}

/**
 * The fetch of a subscription queue's consumer: pg-boss's (`fetchNextJob`: the same selection,
 * `active` marking and retry count), in `dueOrder`.
 *
 * With `leftOut`, the jobs it names are NOT fetched: the fetching consumer of a subscription
 * whose messages of one kind a transactional consumer takes (TransactionalSubscription.only)
 * leaves those to it, or it would take most of them first (seen here: of 2,000 retry checks due
 * during a batch, the batches took 418). A message without the property is fetched. Our
 * subscription queues use pg-boss's standard policy, so its singleton grouping has nothing to do
 * here.
 */
export async function fetchJobs(
  db: AnyKysely,
  queue: string,
  limit: number,
  leftOut?: TakeOnly,
): Promise<QueueJob[]> {
  const { rows } = await fetchJobsStatement(queue, limit, leftOut).execute(db);
  return rows.map(queueJobOf);
}

/** The statement of {@link fetchJobs} (tests read its plan). */
export function fetchJobsStatement(queue: string, limit: number, leftOut?: TakeOnly): RawBuilder<TakenRow> {
  const job = sql.table(`${bossSchema}.job`);
  return sql<TakenRow>`
    WITH chosen AS MATERIALIZED (
      SELECT id FROM ${job}
      WHERE name = ${queue} AND state < 'active' AND start_after < now()
      ${leftOut === undefined ? sql`` : sql`AND NOT coalesce(data -> 'properties' ->> ${leftOut.property} = ANY(${[...leftOut.values]}::text[]), false)`}
      ORDER BY ${dueOrder}
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    ), fetched AS (
      UPDATE ${job} AS j SET
        state = 'active',
        started_on = now(),
        retry_count = CASE WHEN j.started_on IS NOT NULL THEN j.retry_count + 1 ELSE j.retry_count END
      FROM chosen
      WHERE j.name = ${queue} AND j.id = chosen.id
      RETURNING j.id, j.data, j.retry_count, j.start_after, j.created_on
    )
    SELECT id, data, retry_count FROM fetched ORDER BY ${dueOrder}
  `;
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

/**
 * The order every fetch and take hands jobs out in: as they fell due, the key order of
 * `matoolkit_job_due_order` (bus-tables.ts), so a fetch reads the first due jobs and stops at its
 * limit, and jobs not yet due are never read (a 60 s poll interval over 10,000 polling steps keeps
 * ~10,000 poll checks queued).
 *
 * pg-boss's own fetch goes by (priority DESC, created_on, id). The bus publishes every message at
 * priority 0, and a message not delayed falls due as it is published (its `start_after` and
 * `created_on` are both the publishing transaction's `now()`, publish-message.ts), so for those the
 * two orders are the same, ties of one publish in publish order by their ids (ordered-job-id.ts).
 * A delayed message comes as if published when it fell due: after what was published before then
 * rather than ahead of it.
 */
const dueOrder = sql`start_after, created_on, id`;

function queueJobOf(row: TakenRow): QueueJob {
  return { id: row.id, data: row.data, retryCount: row.retry_count };
}

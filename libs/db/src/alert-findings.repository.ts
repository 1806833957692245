import { sql } from "kysely";
import type { Db } from "./connection.ts";

/**
 * What each alert condition with an in-process evaluation finds in the database right now
 * (issue 31; the conditions and thresholds: libs/domain/src/alerts/definitions.ts). A finding is
 * one subject the condition holds for; the evaluator raises what is new and resolves what is
 * gone. Counts, ids and reason codes only: no member key, data, params or result.
 */
export interface AlertFinding {
  readonly subject: string;
  readonly runbookName: string | null;
  readonly batchId: number | null;
  readonly details: Record<string, unknown>;
}

async function rows<T>(db: Db, query: ReturnType<typeof sql<T>>): Promise<T[]> {
  return (await query.execute(db)).rows;
}

/** Active runbook versions whose data source failed `ticks` ticks in a row. */
export async function findFailingSources(db: Db, ticks: number): Promise<AlertFinding[]> {
  const found = await rows<{ name: string; failures: number; code: string | null }>(
    db,
    sql`SELECT name, consecutive_failures AS failures, split_part(last_error, ':', 1) AS code
        FROM runbooks WHERE is_active AND consecutive_failures >= ${ticks} ORDER BY name`,
  );
  return found.map((row) => ({
    subject: `runbook:${row.name}`,
    runbookName: row.name,
    batchId: null,
    // The reason code only: last_error's message part is sanitized, but a code is all a receiver needs.
    details: { consecutiveFailures: row.failures, reasonCode: row.code },
  }));
}

/**
 * Dead letters per (topic, subscription) dead-lettered since `since`: the Dapr adapter's
 * bus_dead_letters table and, where the embedded bus runs in this database, pg-boss's `.dlq`
 * queues (libs/runtime/src/embedded/read-dead-letters.ts).
 */
export async function findDeadLetters(db: Db, since: Date): Promise<AlertFinding[]> {
  const dapr = await rows<{ queue: string; count: string }>(
    db,
    sql`SELECT topic || '/' || subscription AS queue, count(*) AS count FROM bus_dead_letters
        WHERE dead_lettered_at >= ${since} GROUP BY 1`,
  );
  const hasBoss = await rows<{ present: boolean }>(
    db,
    sql`SELECT to_regclass('pgboss.job') IS NOT NULL AS present`,
  );
  const boss = hasBoss[0]?.present
    ? await rows<{ queue: string; count: string }>(
        db,
        // `<topic>.<subscription>.dlq`: the topic is the part before the first dot.
        sql`SELECT regexp_replace(name, '^([^.]+)\\.(.*)\\.dlq$', '\\1/\\2') AS queue, count(*) AS count
            FROM pgboss.job WHERE name LIKE '%.dlq' AND created_on >= ${since} GROUP BY 1`,
      )
    : [];
  const counts = new Map<string, number>();
  for (const row of [...dapr, ...boss])
    counts.set(row.queue, (counts.get(row.queue) ?? 0) + Number(row.count));
  return [...counts]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([queue, count]) => ({
      subject: `subscription:${queue}`,
      runbookName: null,
      batchId: null,
      details: { deadLetters: count },
    }));
}

/** Batches with steps still dispatched `graceSeconds` past their timeout (default `defaultTimeoutSec`). */
export async function findStepsPastTimeout(
  db: Db,
  now: Date,
  options: { readonly graceSeconds: number; readonly defaultTimeoutSec: number },
): Promise<AlertFinding[]> {
  const found = await rows<{ batchId: number; runbookName: string; steps: string }>(
    db,
    sql`SELECT s.batch_id AS "batchId", r.name AS "runbookName", count(*) AS steps
        FROM step_executions s
        JOIN batches b ON b.id = s.batch_id JOIN runbooks r ON r.id = b.runbook_id
        WHERE s.is_open AND s.status = 'dispatched'
          AND s.dispatched_at + (coalesce(s.timeout_sec, ${options.defaultTimeoutSec}) + ${options.graceSeconds})
              * interval '1 second' < ${now}
        GROUP BY 1, 2 ORDER BY 1`,
  );
  return found.map((row) => ({
    subject: `batch:${row.batchId}`,
    runbookName: row.runbookName,
    batchId: row.batchId,
    details: { steps: Number(row.steps) },
  }));
}

/** Worker pools whose step results in the window were throttled at least `share` of the time. */
export async function findThrottledPools(
  db: Db,
  now: Date,
  options: {
    readonly windowSeconds: number;
    readonly share: number;
    readonly minResults: number;
    readonly throttledCodes: readonly string[];
  },
): Promise<AlertFinding[]> {
  const since = new Date(now.getTime() - options.windowSeconds * 1000);
  const found = await rows<{ workerId: string; results: string; throttled: string }>(
    db,
    sql`SELECT worker_id AS "workerId", count(*) AS results,
          count(*) FILTER (WHERE error_code IN (${sql.join([...options.throttledCodes])})) AS throttled
        FROM step_executions WHERE completed_at >= ${since} AND completed_at <= ${now}
        GROUP BY 1 ORDER BY 1`,
  );
  return found
    .map((row) => ({
      workerId: row.workerId,
      results: Number(row.results),
      throttled: Number(row.throttled),
    }))
    .filter((row) => row.results >= options.minResults && row.throttled / row.results >= options.share)
    .map((row) => ({
      subject: `pool:${row.workerId}`,
      runbookName: null,
      batchId: null,
      details: { results: row.results, throttled: row.throttled, share: row.throttled / row.results },
    }));
}

/** Phases of active batches due more than `graceSeconds` ago and still pending. */
export async function findPhasesNotDispatched(
  db: Db,
  now: Date,
  graceSeconds: number,
): Promise<AlertFinding[]> {
  const found = await rows<{ phaseId: number; batchId: number; runbookName: string; dueAt: Date }>(
    db,
    sql`SELECT p.id AS "phaseId", p.batch_id AS "batchId", r.name AS "runbookName", p.due_at AS "dueAt"
        FROM phase_executions p
        JOIN batches b ON b.id = p.batch_id JOIN runbooks r ON r.id = b.runbook_id
        WHERE p.status = 'pending' AND b.status = 'active'
          AND p.due_at + ${graceSeconds} * interval '1 second' < ${now}
        ORDER BY p.id`,
  );
  return found.map((row) => ({
    subject: `phase:${row.phaseId}`,
    runbookName: row.runbookName,
    batchId: row.batchId,
    details: { phaseId: row.phaseId, dueAt: new Date(row.dueAt).toISOString() },
  }));
}

/** Batches that are failed and whose failure was recorded since `since`. */
export async function findFailedBatches(db: Db, since: Date): Promise<AlertFinding[]> {
  const found = await rows<{ batchId: number; runbookName: string; failedMembers: number | null }>(
    db,
    sql`SELECT b.id AS "batchId", r.name AS "runbookName", b.failed_members AS "failedMembers"
        FROM batches b JOIN runbooks r ON r.id = b.runbook_id
        WHERE b.status = 'failed' AND EXISTS (
          SELECT 1 FROM events e WHERE e.batch_id = b.id AND e.entity = 'batch' AND e.entity_id = b.id
            AND e.to_status = 'failed' AND e.at >= ${since})
        ORDER BY b.id`,
  );
  return found.map((row) => ({
    subject: `batch:${row.batchId}`,
    runbookName: row.runbookName,
    batchId: row.batchId,
    details: { failedMembers: row.failedMembers },
  }));
}

import pg from "pg";
import { malformedIdPrefix } from "./messages-catalogue.ts";

/**
 * What became of the drill's messages, read from pg-boss's tables (the bus has no API to list a
 * queue's jobs): per subscription queue, how many ended completed (the handler took them: ignored
 * or refused with a log line), failed (dead-lettered), or are still waiting or being retried.
 * Dead-letter copies (the `<queue>.dlq` queues) are left out: a failed job is one dead letter.
 */
export interface QueueFate {
  readonly queue: string;
  readonly completed: number;
  readonly failed: number;
  /** created / retry / active: not finished yet; after the drill's wait, "retried forever". */
  readonly open: number;
}

export async function malformedFates(url: string): Promise<QueueFate[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const archived = await client.query<{ exists: boolean }>(
      "SELECT to_regclass('pgboss.archive') IS NOT NULL AS exists",
    );
    const archive = archived.rows[0]?.exists
      ? "UNION ALL SELECT name, state::text, retry_count, data FROM pgboss.archive"
      : "";
    const result = await client.query<{
      queue: string;
      completed: number;
      failed: number;
      open: number;
    }>(
      `SELECT name AS queue,
              count(*) FILTER (WHERE state = 'completed')::int AS completed,
              count(*) FILTER (WHERE state = 'failed')::int AS failed,
              count(*) FILTER (WHERE state IN ('created', 'retry', 'active'))::int AS open
       FROM (SELECT name, state::text, retry_count, data FROM pgboss.job ${archive}) AS jobs
       -- A dead-letter queue's copies wait there for a person: counted as failed at their source.
       WHERE data->>'id' LIKE $1 AND name NOT LIKE '%.dlq'
       GROUP BY name ORDER BY name`,
      [`${malformedIdPrefix}%`],
    );
    return result.rows;
  } finally {
    await client.end();
  }
}

/** Jobs of the batch (not the drill's) that were dead-lettered: a real message lost. */
export async function batchDeadLetters(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const result = await client.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pgboss.job WHERE name LIKE '%.dlq' AND NOT (data->>'id' LIKE $1)",
      [`${malformedIdPrefix}%`],
    );
    return result.rows[0]?.n ?? 0;
  } finally {
    await client.end();
  }
}

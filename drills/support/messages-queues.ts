import pg from "pg";
import type { OutgoingMessage } from "@matoolkit/runtime";
import { malformedIdPrefix } from "./messages-catalogue.ts";

/**
 * What became of the drill's messages, per subscription queue: how many it was routed
 * (`routed`), how many failed (dead-lettered) or are still waiting or being retried, read from
 * pg-boss's job table (the bus has no API to list a queue's jobs), and how many its handler took
 * (ignored, or refused with a log line): the rest. A job its handler took is deleted at once
 * (libs/runtime/src/embedded/queue-consumer.ts), so that one cannot be counted from the table; it
 * is what was routed and is neither failed nor open. Routing is read back as the bus does it at
 * publish time (publish-message.ts): a message goes to every subscription of its topic whose
 * filter its properties contain. Dead-letter copies (the `<queue>.dlq` queues) are left out: a
 * failed job is one dead letter.
 */
export interface QueueFate {
  readonly queue: string;
  readonly routed: number;
  /** Taken by the handler (acknowledged): routed − failed − open. */
  readonly handled: number;
  readonly failed: number;
  /** created / retry / active: not finished yet; after the drill's wait, "retried forever". */
  readonly open: number;
}

/** `accepted`: the drill's messages the bus accepted (their ids are unique: none was dropped as a duplicate). */
export async function malformedFates(
  url: string,
  accepted: ReadonlyArray<Pick<OutgoingMessage, "topic" | "properties">>,
): Promise<QueueFate[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const result = await client.query<{ queue: string; routed: number; failed: number; open: number }>(
      `WITH routed AS (
         SELECT s.queue, count(*)::int AS routed
         FROM jsonb_to_recordset($2::jsonb) AS m(topic text, properties jsonb)
         JOIN matoolkit_bus.subscriptions s ON s.topic = m.topic AND m.properties @> s.filter
         GROUP BY s.queue
       ), left_over AS (
         SELECT name AS queue,
                count(*) FILTER (WHERE state = 'failed')::int AS failed,
                count(*) FILTER (WHERE state IN ('created', 'retry', 'active'))::int AS open
         FROM pgboss.job
         WHERE data->>'id' LIKE $1
         GROUP BY name
       )
       SELECT r.queue, r.routed, coalesce(l.failed, 0) AS failed, coalesce(l.open, 0) AS open
       FROM routed r LEFT JOIN left_over l ON l.queue = r.queue
       ORDER BY r.queue`,
      [
        `${malformedIdPrefix}%`,
        JSON.stringify(accepted.map(({ topic, properties }) => ({ topic, properties }))),
      ],
    );
    return result.rows.map((row) => ({ ...row, handled: row.routed - row.failed - row.open }));
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

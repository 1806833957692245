import { sql, type RawBuilder } from "kysely";
import { bossSchema, busSchema } from "./bus-tables.ts";
import { orderedJobId } from "./ordered-job-id.ts";
import type { CheckedMessage } from "./message-envelope.ts";
import type { AnyKysely } from "../any-kysely.ts";

/** NOTIFY channel: the payload is the queue that just received a job, so its consumers fetch now. */
export const busNotifyChannel = "matoolkit_bus";

export type PublishOutcome =
  | { readonly status: "published"; readonly queues: readonly string[] }
  | { readonly status: "duplicate" }
  | { readonly status: "no_subscription" };

export interface PublishContext {
  readonly db: AnyKysely;
  readonly dedupeWindowSeconds: number;
}

/**
 * Publishes many messages in ONE statement, whatever their number (issue 29: a round trip is
 * what a publish costs): claim the (topic, id) dedupe keys (of the messages not published
 * `onceByTransaction`), find the subscriptions whose filter each message going out matches,
 * insert one pg-boss job per (message, subscription), NOTIFY the consumers of every queue that
 * got an immediate message. One statement is one transaction: either the whole call happens and
 * its keys are recorded, or nothing does, so a retried call after a crash is never
 * half-deduplicated. Returns one outcome per message, in order.
 *
 * Why a key table rather than pg-boss job ids derived from the message id: a job id only
 * dedupes while the job sits in its queue (until archived, hours later, and differently per
 * subscription), not for a fixed, configurable window; the key row expires exactly at the
 * window (000: 10 minutes), across processes, thanks to `INSERT … ON CONFLICT`.
 *
 * Filters are applied here, at publish time, as in Service Bus: `properties @> filter` is an
 * equality match on every filter key. A subscription created after the publish does not get it.
 *
 * The job rows are written as pg-boss's own `insert` writes them (node_modules/pg-boss/src/
 * plans.js `insertJobs`, v10): the queue's retry, expiry, retention, dead-letter and policy, with
 * pg-boss's defaults where the queue has none (our queues set them all: register-subscription.ts).
 * A message's jobs in several queues share one id: pg-boss's key is (name, id).
 *
 * `alongside`: more WITH queries (`, name AS (…)`) run by the same statement, so that their
 * writes and the publish commit or fail together (settle-deliveries.ts). PostgreSQL runs every
 * data-modifying WITH query to completion whether or not the rest reads it.
 */
export async function publishMessages(
  context: PublishContext,
  messages: readonly CheckedMessage[],
  alongside?: RawBuilder<unknown>,
): Promise<PublishOutcome[]> {
  const outcomes: PublishOutcome[] = messages.map(() => ({ status: "duplicate" }) as const);
  // Duplicates inside the call are settled here: ON CONFLICT cannot touch one row twice in a
  // statement, and the first copy is the one that goes out, as if published one after another.
  const firstIndex = new Map<string, number>();
  messages.forEach((message, index) => {
    const key = dedupeKey(message.topic, message.id);
    if (!firstIndex.has(key)) firstIndex.set(key, index);
  });
  if (firstIndex.size === 0) {
    if (alongside !== undefined) throw new Error("A publish with other writes alongside needs a message");
    return outcomes;
  }
  // Keys claimed in one fixed order: two statements claiming overlapping keys then wait for each
  // other instead of deadlocking. Job ids follow the messages' order in the call, so a queue
  // hands them out in publish order (ordered-job-id.ts).
  const candidates = [...firstIndex.values()].sort((a, b) => a - b);
  const jobIds = new Map(candidates.map((index) => [index, orderedJobId()]));
  const claimOrder = [...firstIndex.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const input = claimOrder.map(([, index], claimRank) => {
    const { topic, id, properties, body, deliverAt, onceByTransaction } = messages[index]!;
    return {
      pos: index,
      claim_rank: claimRank,
      deduped: onceByTransaction !== true,
      topic,
      message_id: id,
      job_id: jobIds.get(index)!,
      properties,
      body: body ?? null,
      start_after: deliverAt?.toISOString() ?? null,
    };
  });

  const routes = await sql<{ pos: number; queue: string | null }>`
    WITH input AS (
      SELECT * FROM jsonb_to_recordset(${JSON.stringify(input)}::jsonb) AS m(
        pos int, claim_rank int, deduped boolean, topic text, message_id text, job_id uuid,
        properties jsonb, body jsonb, start_after timestamptz)
    ), claimed AS (
      INSERT INTO ${sql.table(`${busSchema}.dedupe_keys`)} AS k (topic, message_id, expires_at)
      SELECT topic, message_id, now() + make_interval(secs => ${context.dedupeWindowSeconds})
      FROM input WHERE deduped ORDER BY claim_rank
      ON CONFLICT (topic, message_id) DO UPDATE SET expires_at = EXCLUDED.expires_at
        WHERE k.expires_at <= now()
      RETURNING topic, message_id
    ), routed AS (
      -- A message published once by its transaction (OutgoingMessage.onceByTransaction) has no
      -- key to claim: it goes out as it is.
      SELECT m.*, s.queue
      FROM input m
      LEFT JOIN claimed c ON c.topic = m.topic AND c.message_id = m.message_id
      LEFT JOIN ${sql.table(`${busSchema}.subscriptions`)} AS s ON s.topic = m.topic AND m.properties @> s.filter
      WHERE NOT m.deduped OR c.message_id IS NOT NULL
    ), jobs AS (
      INSERT INTO ${sql.table(`${bossSchema}.job`)} (id, name, data, priority, start_after, dead_letter,
        expire_in, keep_until, retry_limit, retry_delay, retry_backoff, policy)
      SELECT r.job_id, r.queue,
             jsonb_build_object('id', r.message_id, 'topic', r.topic, 'properties', r.properties, 'body', r.body),
             0, coalesce(r.start_after, now()), q.dead_letter,
             coalesce(q.expire_seconds * interval '1 second', interval '15 minutes'),
             coalesce(r.start_after, now()) + coalesce(q.retention_minutes * interval '1 minute', interval '14 days'),
             coalesce(q.retry_limit, 2),
             CASE WHEN coalesce(q.retry_backoff, false) THEN greatest(coalesce(q.retry_delay, 0), 1)
                  ELSE coalesce(q.retry_delay, 0) END,
             coalesce(q.retry_backoff, false), q.policy
      FROM routed r JOIN ${sql.table(`${bossSchema}.queue`)} AS q ON q.name = r.queue
      ORDER BY r.pos
      RETURNING name, start_after <= now() AS due
    ), woken AS (
      -- pg_notify is volatile: PostgreSQL keeps the call although nothing reads its (void) value.
      SELECT count(*) AS queues FROM (
        SELECT pg_notify(${busNotifyChannel}, name) FROM (SELECT DISTINCT name FROM jobs WHERE due) AS due_queues
      ) AS notified
    )${alongside ?? sql.raw("")}
    SELECT r.pos, r.queue FROM routed r, woken
    ORDER BY r.pos, r.queue`.execute(context.db);

  const queuesOf = new Map<number, string[]>();
  for (const { pos, queue } of routes.rows) {
    const queues = queuesOf.get(pos) ?? [];
    if (queue !== null) queues.push(queue);
    queuesOf.set(pos, queues);
  }
  for (const [position, queues] of queuesOf) {
    outcomes[position] =
      queues.length === 0 ? { status: "no_subscription" } : { status: "published", queues };
  }
  return outcomes;
}

function dedupeKey(topic: string, id: string): string {
  return JSON.stringify([topic, id]);
}

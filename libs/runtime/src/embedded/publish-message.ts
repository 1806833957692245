import { sql } from "kysely";
import type PgBoss from "pg-boss";
import { busSchema } from "./bus-tables.ts";
import { kyselyBossDb } from "./kysely-boss-db.ts";
import { orderedJobId } from "./ordered-job-id.ts";
import type { CheckedMessage, MessageEnvelope } from "./message-envelope.ts";
import type { AnyKysely } from "../any-kysely.ts";

/** NOTIFY channel: the payload is the queue that just received a job, so its consumers fetch now. */
export const busNotifyChannel = "matoolkit_bus";

export type PublishOutcome =
  | { readonly status: "published"; readonly queues: readonly string[] }
  | { readonly status: "duplicate" }
  | { readonly status: "no_subscription" };

export interface PublishContext {
  readonly db: AnyKysely;
  readonly boss: PgBoss;
  readonly dedupeWindowSeconds: number;
}

/**
 * Publishes many messages in ONE transaction of four set-based statements, whatever their
 * number: claim the (topic, id) dedupe keys, find the subscriptions whose filter each message's
 * properties match, insert one pg-boss job per (message, subscription), NOTIFY the consumers of
 * every queue that got an immediate message. Either the whole call happens and its keys are
 * recorded, or nothing does, so a retried call after a crash is never half-deduplicated.
 * Returns one outcome per message, in order.
 *
 * Why a key table rather than pg-boss job ids derived from the message id: a job id only
 * dedupes while the job sits in its queue (until archived, hours later, and differently per
 * subscription), not for a fixed, configurable window; the key row expires exactly at the
 * window (000: 10 minutes), across processes, thanks to `INSERT … ON CONFLICT`.
 *
 * Filters are applied here, at publish time, as in Service Bus: `properties @> filter` is an
 * equality match on every filter key. A subscription created after the publish does not get it.
 */
export async function publishMessages(
  context: PublishContext,
  messages: readonly CheckedMessage[],
): Promise<PublishOutcome[]> {
  const outcomes: PublishOutcome[] = messages.map(() => ({ status: "duplicate" }) as const);
  // Duplicates inside the call are settled here: ON CONFLICT cannot touch one row twice in a
  // statement, and the first copy is the one that goes out, as if published one after another.
  const firstIndex = new Map<string, number>();
  messages.forEach((message, index) => {
    const key = dedupeKey(message.topic, message.id);
    if (!firstIndex.has(key)) firstIndex.set(key, index);
  });
  if (firstIndex.size === 0) return outcomes;
  // Keys in one fixed order: two transactions claiming overlapping keys then wait for each
  // other instead of deadlocking.
  const keys = [...firstIndex.keys()].sort();
  const candidates = keys.map((key) => messages[firstIndex.get(key)!]!);

  return context.db.transaction().execute(async (trx) => {
    const claimedRows = await sql<{ topic: string; message_id: string }>`
      INSERT INTO ${sql.table(`${busSchema}.dedupe_keys`)} AS k (topic, message_id, expires_at)
      SELECT topic, message_id, now() + make_interval(secs => ${context.dedupeWindowSeconds})
      FROM unnest(${candidates.map((m) => m.topic)}::text[], ${candidates.map((m) => m.id)}::text[])
        WITH ORDINALITY AS c(topic, message_id, ord)
      ORDER BY ord
      ON CONFLICT (topic, message_id) DO UPDATE SET expires_at = EXCLUDED.expires_at
        WHERE k.expires_at <= now()
      RETURNING topic, message_id`.execute(trx);
    const claimed = claimedRows.rows.map((row) => firstIndex.get(dedupeKey(row.topic, row.message_id))!);
    if (claimed.length === 0) return outcomes;
    claimed.sort((a, b) => a - b);

    // One query for every claimed message: its position in `claimed`, and each queue it goes to.
    const routes = await sql<{ position: number; queue: string }>`
      SELECT (m.ord - 1)::int AS position, s.queue
      FROM jsonb_array_elements(${JSON.stringify(
        claimed.map((index) => ({ topic: messages[index]!.topic, properties: messages[index]!.properties })),
      )}::jsonb) WITH ORDINALITY AS m(message, ord)
      JOIN ${sql.table(`${busSchema}.subscriptions`)} AS s
        ON s.topic = m.message->>'topic' AND (m.message->'properties') @> s.filter
      ORDER BY m.ord, s.name`.execute(trx);
    const queuesOf = new Map<number, string[]>();
    for (const row of routes.rows) {
      const index = claimed[row.position]!;
      queuesOf.set(index, [...(queuesOf.get(index) ?? []), row.queue]);
    }

    const jobs: Array<{ id: string; name: string; data: MessageEnvelope; startAfter?: string }> = [];
    const wake = new Set<string>();
    const now = Date.now();
    for (const index of claimed) {
      const { id, topic, properties, body, deliverAt } = messages[index]!;
      const queues = queuesOf.get(index) ?? [];
      if (queues.length === 0) {
        outcomes[index] = { status: "no_subscription" };
        continue;
      }
      const envelope: MessageEnvelope = { id, topic, properties, body };
      for (const queue of queues) {
        jobs.push({ id: orderedJobId(), name: queue, data: envelope, startAfter: deliverAt?.toISOString() });
      }
      // A delayed message is found by the consumers' poll once due; waking them now is pointless.
      if (deliverAt === undefined || deliverAt.getTime() <= now) queues.forEach((queue) => wake.add(queue));
      outcomes[index] = { status: "published", queues };
    }
    if (jobs.length > 0) await context.boss.insert(jobs, { db: kyselyBossDb(trx) });
    if (wake.size > 0) {
      await sql`SELECT pg_notify(${busNotifyChannel}, queue) FROM unnest(${[...wake]}::text[]) AS queue`.execute(
        trx,
      );
    }
    return outcomes;
  });
}

function dedupeKey(topic: string, id: string): string {
  return JSON.stringify([topic, id]);
}

/** Expired keys are dead weight; any process may sweep them. */
export async function deleteExpiredDedupeKeys(db: AnyKysely): Promise<void> {
  await sql`
    DELETE FROM ${sql.table(`${busSchema}.dedupe_keys`)}
    WHERE (topic, message_id) IN (
      SELECT topic, message_id FROM ${sql.table(`${busSchema}.dedupe_keys`)}
      WHERE expires_at <= now() LIMIT 10000
    )`.execute(db);
}

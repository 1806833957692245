import { sql } from "kysely";
import type PgBoss from "pg-boss";
import type { OutgoingMessage } from "../ports/index.ts";
import { busSchema } from "./bus-tables.ts";
import { kyselyBossDb } from "./kysely-boss-db.ts";
import { outgoingMessageSchema } from "./message-envelope.ts";
import type { MessageEnvelope } from "./message-envelope.ts";
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
 * One transaction: claim the (topic, id) dedupe key, find the subscriptions whose filter the
 * properties match, insert one pg-boss job per subscription, NOTIFY their consumers. Either the
 * whole fan-out happens and the key is recorded, or nothing does, so a retried publish after a
 * crash is never half-deduplicated.
 *
 * Why a key table rather than pg-boss job ids derived from the message id: a job id only
 * dedupes while the job sits in its queue (until archived, hours later, and differently per
 * subscription), not for a fixed, configurable window; the key row expires exactly at the
 * window (000: 10 minutes), across processes, thanks to `INSERT … ON CONFLICT`.
 *
 * Filters are applied here, at publish time, as in Service Bus: `properties @> filter` is an
 * equality match on every filter key. A subscription created after the publish does not get it.
 */
export async function publishMessage(
  context: PublishContext,
  message: OutgoingMessage,
): Promise<PublishOutcome> {
  const { id, topic, properties, body, deliverAt } = outgoingMessageSchema.parse(message);
  return context.db.transaction().execute(async (trx) => {
    const claimed = await sql<{ claimed: number }>`
      INSERT INTO ${sql.table(`${busSchema}.dedupe_keys`)} AS k (topic, message_id, expires_at)
      VALUES (${topic}, ${id}, now() + make_interval(secs => ${context.dedupeWindowSeconds}))
      ON CONFLICT (topic, message_id) DO UPDATE SET expires_at = EXCLUDED.expires_at
        WHERE k.expires_at <= now()
      RETURNING 1 AS claimed`.execute(trx);
    if (claimed.rows.length === 0) return { status: "duplicate" } as const;

    const subscriptions = await sql<{ queue: string }>`
      SELECT queue FROM ${sql.table(`${busSchema}.subscriptions`)}
      WHERE topic = ${topic} AND ${JSON.stringify(properties)}::jsonb @> filter
      ORDER BY name`.execute(trx);
    if (subscriptions.rows.length === 0) return { status: "no_subscription" } as const;

    const envelope: MessageEnvelope = { id, topic, properties, body };
    const queues = subscriptions.rows.map((row) => row.queue);
    await context.boss.insert(
      queues.map((queue) => ({ name: queue, data: envelope, startAfter: deliverAt?.toISOString() })),
      { db: kyselyBossDb(trx) },
    );
    // A delayed message is found by the consumers' poll once due; waking them now is pointless.
    if (deliverAt === undefined || deliverAt.getTime() <= Date.now()) {
      for (const queue of queues) await sql`SELECT pg_notify(${busNotifyChannel}, ${queue})`.execute(trx);
    }
    return { status: "published", queues } as const;
  });
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

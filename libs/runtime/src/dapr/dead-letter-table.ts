import { sql } from "kysely";
import type { AnyKysely } from "../any-kysely.ts";
import type { DeadLetter, Subscription } from "../ports/index.ts";

/**
 * Dead letters of the Dapr adapter, in PostgreSQL beside the service's own tables. Dapr forwards
 * a dropped message to the subscription's dead-letter topic, but the broker's copy carries no
 * reason and brokers cannot be listed portably; this row is what `MessageBus.deadLetters()` and
 * operators read: the message, its subscription, how often it was tried and the sanitized reason.
 */
const table = sql.table("matoolkit_dapr.dead_letters");

export async function installDeadLetterTable(db: AnyKysely): Promise<void> {
  await sql`CREATE SCHEMA IF NOT EXISTS matoolkit_dapr`.execute(db).catch(ignoreConcurrentCreate);
  await sql`
    CREATE TABLE IF NOT EXISTS ${table} (
      id bigserial PRIMARY KEY,
      message_id text NOT NULL,
      topic text NOT NULL,
      subscription text NOT NULL,
      body jsonb,
      properties jsonb NOT NULL,
      delivery_count integer NOT NULL,
      error text NOT NULL,
      dead_lettered_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (topic, subscription, message_id)
    )`
    .execute(db)
    .catch(ignoreConcurrentCreate);
}

export async function recordDeadLetter(
  db: AnyKysely,
  letter: Omit<DeadLetter, "deadLetteredAt">,
): Promise<void> {
  // A redelivered copy of a message already dead-lettered must not list it twice.
  await sql`
    INSERT INTO ${table} (message_id, topic, subscription, body, properties, delivery_count, error)
    VALUES (${letter.id}, ${letter.topic}, ${letter.subscription}, ${JSON.stringify(letter.body ?? null)}::jsonb,
            ${JSON.stringify(letter.properties)}::jsonb, ${letter.deliveryCount}, ${letter.error})
    ON CONFLICT (topic, subscription, message_id) DO NOTHING`.execute(db);
}

interface DeadLetterRow {
  readonly messageId: string;
  readonly topic: DeadLetter["topic"];
  readonly subscription: string;
  readonly body: unknown;
  readonly properties: Record<string, string>;
  readonly deliveryCount: number;
  readonly error: string;
  readonly deadLetteredAt: Date;
}

export async function readDaprDeadLetters(
  db: AnyKysely,
  subscription: Pick<Subscription, "topic" | "name">,
): Promise<DeadLetter[]> {
  // Aliased in camelCase: the service's Kysely may run CamelCasePlugin over rows.
  const result = await sql<DeadLetterRow>`
    SELECT message_id AS "messageId", topic, subscription, body, properties,
           delivery_count AS "deliveryCount", error, dead_lettered_at AS "deadLetteredAt"
    FROM ${table} WHERE topic = ${subscription.topic} AND subscription = ${subscription.name}
    ORDER BY id`.execute(db);
  return result.rows.map((row) => ({
    id: row.messageId,
    topic: row.topic,
    subscription: row.subscription,
    body: row.body,
    properties: row.properties,
    deliveryCount: row.deliveryCount,
    error: row.error,
    deadLetteredAt: row.deadLetteredAt,
  }));
}

/** Two processes starting at once both try CREATE … IF NOT EXISTS; the loser's error is harmless. */
function ignoreConcurrentCreate(error: unknown): void {
  const code = (error as { code?: string }).code;
  if (code === "23505" || code === "42P07" || code === "42P06") return;
  throw error;
}

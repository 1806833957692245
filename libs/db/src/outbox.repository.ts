import { chunksForInsert } from "./chunks.ts";
import { sql } from "kysely";
import type { JsonObject } from "./column-types.ts";
import type { Db } from "./connection.ts";
import { jsonb } from "./json.ts";
import type { OutboxRow } from "./outbox.table.ts";

/** The NOTIFY channel a relay LISTENs on to publish new outbox rows without waiting for its poll. */
export const OUTBOX_CHANNEL = "matoolkit_outbox";

export interface OutboxMessage {
  readonly messageId: string;
  readonly topic: string;
  readonly properties: JsonObject;
  readonly body: unknown;
  /** Scheduled delivery; absent means as soon as possible. */
  readonly deliverAt?: Date | null;
}

/** Properties every enqueued row gets besides its own (see setOutboxAmbientProperties). */
export type OutboxAmbientProperties = () => Readonly<Record<string, string>>;
let ambientProperties: OutboxAmbientProperties = () => ({});

/**
 * Installs what every outbox row carries besides its own properties: the runtime's telemetry
 * sets the active trace context (`traceparent`) and the enqueue time here at start-up, so a
 * message continues the trace of the request or delivery whose transaction wrote it, without
 * each of enqueueOutbox's callers passing it. One per process; the message's own properties win.
 * Returns a function that restores the previous source.
 */
export function setOutboxAmbientProperties(source: OutboxAmbientProperties): () => void {
  const previous = ambientProperties;
  ambientProperties = source;
  return () => {
    ambientProperties = previous;
  };
}

/**
 * Queues messages for publishing and wakes the relay, in one statement: written in the caller's
 * transaction, the rows and the notification both take effect at its commit (or neither does).
 * Returns the new row ids in order.
 */
export async function enqueueOutbox(db: Db, messages: readonly OutboxMessage[]): Promise<number[]> {
  const ids: number[] = [];
  const ambient = ambientProperties();
  const values = messages.map((message) => ({
    messageId: message.messageId,
    topic: message.topic,
    properties: jsonb({ ...ambient, ...message.properties }),
    body: jsonb(message.body),
    deliverAt: message.deliverAt ?? null,
  }));
  for (const chunk of chunksForInsert(values)) {
    const row = await db
      .with("inserted", (qb) => qb.insertInto("outbox").values(chunk).returning("id"))
      .selectFrom("inserted")
      // Aggregating makes pg_notify run once however many rows were inserted.
      .select([
        sql<(string | number)[]>`array_agg(id ORDER BY id)`.as("ids"),
        sql`pg_notify(${OUTBOX_CHANNEL}, '')`.as("wake"),
      ])
      .executeTakeFirstOrThrow();
    // node-postgres parses a bigint[] as strings (only scalar int8 is parsed as a number, connection.ts).
    ids.push(...row.ids.map(Number));
  }
  return ids;
}

/**
 * The oldest rows no other transaction has claimed, locked until the caller's transaction ends:
 * call inside a transaction, publish, then deleteOutbox before committing. Concurrent relays each
 * get different rows (SKIP LOCKED). This module owns the `outbox` table: the runtime's relay
 * claims and deletes through these two functions, never by SQL of its own.
 *
 * Raw SQL with camelCase aliases: the row comes back the same whether or not the handle runs
 * the query builder's camelCase plugin (the runtime receives any Kysely of the service).
 */
export async function claimOutboxBatch(db: Db, limit: number): Promise<OutboxRow[]> {
  const result = await sql<OutboxRow>`
    SELECT id, message_id AS "messageId", topic, properties, body, deliver_at AS "deliverAt",
      created_at AS "createdAt"
    FROM outbox ORDER BY id LIMIT ${limit} FOR UPDATE SKIP LOCKED`.execute(db);
  return result.rows;
}

/**
 * The oldest rows no other transaction has claimed, taken out of the table in the caller's
 * transaction (one statement where {@link claimOutboxBatch} and {@link deleteOutbox} are two):
 * publish, then commit; roll back and the rows are back for the next relay. In id order.
 */
export async function takeOutboxBatch(db: Db, limit: number): Promise<OutboxRow[]> {
  const result = await sql<OutboxRow>`
    DELETE FROM outbox WHERE id IN (
      SELECT id FROM outbox ORDER BY id LIMIT ${limit} FOR UPDATE SKIP LOCKED
    )
    RETURNING id, message_id AS "messageId", topic, properties, body, deliver_at AS "deliverAt",
      created_at AS "createdAt"`.execute(db);
  // RETURNING follows no ORDER BY; the relay publishes in id order.
  return result.rows.sort((a, b) => Number(a.id) - Number(b.id));
}

/** Deletes published rows (one statement for the whole batch); returns how many were deleted. */
export async function deleteOutbox(db: Db, ids: readonly number[]): Promise<number> {
  if (ids.length === 0) return 0;
  const result = await sql`DELETE FROM outbox WHERE id = ANY(${ids}::bigint[])`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

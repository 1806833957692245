import { sql } from "kysely";
import type { AnyKysely } from "../any-kysely.ts";
import type { DeadLetter, Subscription } from "../ports/index.ts";

/**
 * Dead letters of the Dapr adapter, in PostgreSQL beside the service's own tables. Dapr forwards
 * a dropped message to the subscription's dead-letter topic, but the broker's copy carries no
 * reason and brokers cannot be listed portably; this row is what `MessageBus.deadLetters()` and
 * operators read: the message, its subscription, how often it was tried and the sanitized reason.
 *
 * The table is the migrations' (libs/db migration 0013_bus_dead_letters), created by the migrate
 * role and granted to the services like every other table: a service never runs DDL at start,
 * since with one database role per service only the first one to create it could use it.
 */
const tableName = "bus_dead_letters";
const table = sql.table(tableName);

/**
 * At start, read-only: the table exists and this service's role may read it and add rows, so a
 * missing migration or grant fails the start with its name instead of the first dead letter.
 */
export async function assertDeadLetterTableWritable(db: AnyKysely): Promise<void> {
  const sequenceName = `${tableName}_id_seq`;
  // Aliased in camelCase: the service's Kysely may run CamelCasePlugin over rows.
  const { rows } = await sql<{
    role: string;
    exists: boolean;
    canSelect: boolean;
    canInsert: boolean;
    canUseSequence: boolean;
  }>`
    SELECT current_user AS "role",
           to_regclass(${tableName}::text) IS NOT NULL AS "exists",
           coalesce(has_table_privilege(to_regclass(${tableName}::text), 'SELECT'), false) AS "canSelect",
           coalesce(has_table_privilege(to_regclass(${tableName}::text), 'INSERT'), false) AS "canInsert",
           coalesce(has_sequence_privilege(to_regclass(${sequenceName}::text), 'USAGE'), false) AS "canUseSequence"`.execute(
    db,
  );
  const row = rows[0]!;
  if (!row.exists) {
    throw new Error(
      `The dead-letter table ${tableName} does not exist: run \`matoolkit migrate\` (migration 0013_bus_dead_letters) before the services`,
    );
  }
  const missing = [
    ...(row.canSelect ? [] : [`SELECT on ${tableName}`]),
    ...(row.canInsert ? [] : [`INSERT on ${tableName}`]),
    ...(row.canUseSequence ? [] : [`USAGE on ${sequenceName}`]),
  ];
  if (missing.length > 0) {
    throw new Error(
      `Database role ${row.role} may not record dead letters: it lacks ${missing.join(", ")}; grant the services' role what it has on the other tables (deploy/README.md, "Least privilege per identity")`,
    );
  }
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

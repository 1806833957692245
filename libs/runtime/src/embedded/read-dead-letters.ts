import { sql } from "kysely";
import type { DeadLetter, Subscription } from "../ports/index.ts";
import { MAX_DELIVERY_ATTEMPTS } from "../ports/index.ts";
import { bossSchema } from "./bus-tables.ts";
import { describeFailure, failureOutputSchema, messageEnvelopeSchema } from "./message-envelope.ts";
import { deadLetterQueue } from "./queue-names.ts";
import type { AnyKysely } from "../any-kysely.ts";

interface DeadLetterRow {
  readonly data: unknown;
  readonly output: unknown;
  readonly createdOn: Date;
}

/**
 * (Columns are aliased in camelCase: the service's Kysely may run CamelCasePlugin over rows.)
 * pg-boss moves a job that exhausted its retries into the queue's `deadLetter` queue as a new
 * job holding the same data and our failure output. Nobody consumes those queues, so the jobs
 * stay there (state `created`) until retention; pg-boss has no API to list jobs, hence the SQL.
 */
export async function readDeadLetters(
  db: AnyKysely,
  subscription: Pick<Subscription, "topic" | "name">,
): Promise<DeadLetter[]> {
  const result = await sql<DeadLetterRow>`
    SELECT data, output, created_on AS "createdOn" FROM ${sql.table(`${bossSchema}.job`)}
    WHERE name = ${deadLetterQueue(subscription.topic, subscription.name)}
    ORDER BY created_on, id`.execute(db);
  return result.rows.map((row) => {
    // An unreadable envelope is still listed (raw data as body): a dead letter is never hidden.
    const parsed = messageEnvelopeSchema.safeParse(row.data);
    const envelope = parsed.success
      ? parsed.data
      : { id: "(unreadable)", topic: subscription.topic, properties: {}, body: row.data };
    const output = failureOutputSchema.safeParse(row.output);
    return {
      id: envelope.id,
      topic: envelope.topic,
      subscription: subscription.name,
      body: envelope.body,
      properties: envelope.properties,
      // Absent only when pg-boss itself failed the last delivery (lock expiry): all attempts used.
      deliveryCount: (output.success ? output.data.deliveryCount : undefined) ?? MAX_DELIVERY_ATTEMPTS,
      error: describeFailure(row.output),
      deadLetteredAt: row.createdOn,
    };
  });
}

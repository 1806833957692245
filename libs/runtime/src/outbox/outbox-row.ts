import { z } from "zod";
import { topicSchema } from "../embedded/message-envelope.ts";
import type { OutgoingMessage } from "../ports/index.ts";

/**
 * A row of `outbox` (libs/db migration): id bigint (order), message_id (the bus dedupe key),
 * topic, properties jsonb, body jsonb, deliver_at (delayed delivery) and created_at. Read with
 * camelCase aliases (the service's Kysely may run CamelCasePlugin over result rows).
 */
export const outboxRowSchema = z.object({
  id: z.union([z.number().int(), z.string().regex(/^\d+$/u)]),
  messageId: z.string().min(1),
  topic: topicSchema,
  properties: z
    .record(z.string(), z.string())
    .nullable()
    .transform((properties) => properties ?? {}),
  body: z.unknown(),
  deliverAt: z.date().nullable(),
});
export type OutboxRow = z.infer<typeof outboxRowSchema>;

export function toOutgoingMessage(row: OutboxRow): OutgoingMessage {
  return {
    id: row.messageId,
    topic: row.topic,
    properties: row.properties,
    body: row.body,
    ...(row.deliverAt === null ? {} : { deliverAt: row.deliverAt }),
  };
}

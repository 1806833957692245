import { createHash } from "node:crypto";
import { z } from "zod";
import { topicSchema } from "../embedded/message-envelope.ts";
import type { OutgoingMessage } from "../ports/index.ts";

/** A message held back by a one-shot job, as the job's data. */
export const delayedEnvelopeSchema = z.object({
  id: z.string().min(1),
  topic: topicSchema,
  properties: z.record(z.string(), z.string()),
  body: z.unknown(),
});

export const DELIVERY_JOB_PREFIX = "deliver-";

/**
 * One job name per message id: scheduling the same delayed message twice (an outbox relay
 * retrying) replaces the job instead of adding a second; hashed because ids hold `:` and may be
 * long.
 */
export function deliveryJobName(message: Pick<OutgoingMessage, "id" | "topic">): string {
  const digest = createHash("sha256").update(`${message.topic}\n${message.id}`).digest("hex");
  return `${DELIVERY_JOB_PREFIX}${digest.slice(0, 40)}`;
}

import { topics } from "@matoolkit/domain";
import { z } from "zod";

export const topicSchema = z.enum([
  topics.orchestratorEvents,
  topics.workerJobs,
  topics.workerResults,
  topics.notifications,
]);

/**
 * What a pg-boss job of a subscription queue holds: the message as published. Parsed on the way
 * out of the database (a boundary: rows may have been written by another version).
 */
export const messageEnvelopeSchema = z.object({
  id: z.string().min(1),
  topic: topicSchema,
  properties: z.record(z.string(), z.string()),
  body: z.unknown(),
});
export type MessageEnvelope = z.infer<typeof messageEnvelopeSchema>;

/** A publish is checked before anything is written: a bad id or property must fail the caller. */
export const outgoingMessageSchema = messageEnvelopeSchema.extend({
  id: z.string().min(1).max(200),
  deliverAt: z.date().optional(),
  onceByTransaction: z.boolean().optional(),
});
/** A message as `outgoingMessageSchema` checked it: publishing validates before anything is written. */
export type CheckedMessage = z.output<typeof outgoingMessageSchema>;

/**
 * The output we store when a delivery fails (pg-boss copies it to the dead-letter job). Built
 * by us from a sanitized error, but pg-boss also writes its own shape when a lock expires
 * (`{ value: { message } }`), so reading tolerates both.
 */
export const failureOutputSchema = z.object({
  reason: z.string().optional(),
  message: z.string().optional(),
  deliveryCount: z.number().int().positive().optional(),
  value: z.object({ message: z.string().optional() }).optional(),
});
export type FailureOutput = z.infer<typeof failureOutputSchema>;

export function describeFailure(output: unknown): string {
  const parsed = failureOutputSchema.safeParse(output);
  if (!parsed.success) return "unknown failure";
  const { reason, message, value } = parsed.data;
  const text = message ?? value?.message ?? "unknown failure";
  return reason === undefined ? text : `${reason}: ${text}`;
}

import { deliveryStatuses } from "@matoolkit/db";
import { notificationTypes, pingType } from "@matoolkit/domain";
import { z } from "zod";
import { count, id, nullableTimestamp, timestamp } from "../openapi/wire-types.ts";

/** Response bodies of the webhook routes (issue 12). The secret appears in one of them only. */
export const webhookSchema = z
  .object({
    id,
    url: z.string(),
    runbookName: z.string().nullable().meta({ description: "Null: every runbook's batches" }),
    events: z.array(z.string()).meta({ description: `Notification types: ${notificationTypes.join(", ")}` }),
    enabled: z.boolean(),
    createdBy: z.string().nullable(),
    createdAt: timestamp,
  })
  .meta({ id: "Webhook" });

export const createdWebhookSchema = webhookSchema
  .extend({
    secret: z.string().meta({
      description: "Signs every delivery (X-Matoolkit-Signature). Shown in this response only: store it now.",
    }),
  })
  .meta({ id: "CreatedWebhook" });

export const deliveryAttemptSchema = z
  .object({
    attempt: z.int().min(1),
    at: z.string().meta({ description: "ISO 8601 time of the attempt" }),
    httpStatus: z.int().nullable().meta({ description: "Null when no answer came" }),
    errorCode: z.string().nullable().meta({ description: "webhook.* reason code; null when delivered" }),
    durationMs: count,
  })
  .meta({ id: "DeliveryAttempt" });

export const deliverySchema = z
  .object({
    id,
    webhookId: id,
    notificationId: z.string(),
    event: z.string().meta({ description: `A notification type, or ${pingType}` }),
    status: z.enum(deliveryStatuses).meta({
      description:
        "pending: not attempted yet; failed: last attempt failed, another is scheduled; delivered; " +
        "gave_up: attempts exhausted or 410 Gone",
    }),
    attempt: count.meta({ description: "Attempts made so far" }),
    httpStatus: z.int().nullable(),
    errorCode: z.string().nullable(),
    nextAttemptAt: nullableTimestamp,
    createdAt: timestamp,
    finishedAt: nullableTimestamp,
    attempts: z.array(deliveryAttemptSchema),
  })
  .meta({ id: "WebhookDelivery" });

export const deliveryPageSchema = z
  .object({
    items: z.array(deliverySchema),
    nextAfterId: id.nullable().meta({ description: "Pass as afterId for the next page; null when none" }),
  })
  .meta({ id: "WebhookDeliveryPage" });

export const pingResultSchema = z
  .object({
    webhookId: id,
    deliveryId: id.meta({ description: "Follow it in GET /api/webhooks/{id}/deliveries" }),
    notificationId: z.string(),
  })
  .meta({ id: "WebhookPing" });

export const deletedWebhookSchema = z.object({ id, deleted: z.literal(true) }).meta({ id: "DeletedWebhook" });

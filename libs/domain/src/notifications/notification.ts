import { z } from "zod";
import { routingProperties, topics } from "../messages/topics.ts";
import type { MessageEnvelope } from "../messages/envelopes.ts";
import { outcomes } from "../state-machines/outcome.ts";
import { alertConditionIds, alertSeverities } from "../alerts/definitions.ts";

/**
 * Webhook notifications (issue 12): what a subscriber receives, and the two messages that carry it
 * on the `notifications` topic. The payload is a public contract: fields are only ever added
 * (optional), never renamed or removed; a breaking change is a new `schemaVersion`.
 *
 * No member data ever travels: a member is its row id, the step that failed and the step's
 * reason code. Member keys (UPNs, mail addresses) and data columns are PII and stay home.
 */

/**
 * What a webhook can subscribe to: the terminal outcomes of batches and phases, member failures,
 * a phase's approval gate (issue 30): waiting for a decision, approved, rejected; and the
 * system's alerts (issue 31), raised and resolved.
 */
export const notificationTypes = [
  "batch.completed",
  "batch.failed",
  "phase.completed",
  "phase.failed",
  "member.failed",
  "phase.awaiting_approval",
  "phase.approved",
  "phase.rejected",
  "alert.raised",
  "alert.resolved",
] as const;
export type NotificationType = (typeof notificationTypes)[number];

/**
 * The events the optional email notifier (MATOOLKIT_NOTIFY_EMAIL, issue 31 item 7) mails to the
 * batch's initiator and the configured list: a batch's end and an approval request. (An
 * operator's cancel queues no notification, so it sends no email either.)
 */
export const emailNotificationTypes = [
  "batch.completed",
  "batch.failed",
  "phase.awaiting_approval",
] as const satisfies readonly NotificationType[];

/** Sent by POST /api/webhooks/{id}/test, whatever the webhook subscribes to. */
export const pingType = "ping";

export const NOTIFICATION_SCHEMA_VERSION = 1;

const id = z.int().positive();
const batchRef = z
  .object({
    id,
    runbookName: z.string(),
    runbookVersion: z.int().positive(),
    // Added with issue 31 (optional: messages queued before it have none).
    externalRef: z.string().nullable().optional().meta({
      description: "The change ticket or request id the batch belongs to; null when it has none",
    }),
    // Added with issue 31 item 7 (optional: messages queued before it have none).
    createdBy: z.string().nullable().optional().meta({
      description:
        "The batch's initiator as recorded (the operator's identity for a manual batch); null for a batch the scheduler created",
    }),
  })
  .meta({ description: "The batch the event belongs to" });
const memberCounts = z
  .object({
    succeededMembers: z.int().min(0),
    failedMembers: z.int().min(0),
  })
  .meta({ description: "Members that succeeded / failed, as stamped with the outcome" });
const common = {
  schemaVersion: z.literal(NOTIFICATION_SCHEMA_VERSION),
  id: z.string().min(1).meta({
    description: "Stable per event occurrence: the same event delivered twice carries the same id",
  }),
  occurredAt: z.iso.datetime({ offset: true }),
};

export const batchEndedPayloadSchema = z.object({
  ...common,
  type: z.enum(["batch.completed", "batch.failed"]),
  batch: batchRef,
  outcome: z.enum(outcomes),
  counts: memberCounts,
});

export const phaseEndedPayloadSchema = z.object({
  ...common,
  type: z.enum(["phase.completed", "phase.failed"]),
  batch: batchRef,
  phase: z.object({ id, name: z.string(), runbookVersion: z.int().positive() }),
  outcome: z.enum(outcomes),
  counts: memberCounts,
});

/** The approval gate's three events; a rejected phase also sends `phase.failed` (it ended). */
export const phaseApprovalTypes = ["phase.awaiting_approval", "phase.approved", "phase.rejected"] as const;
export type PhaseApprovalType = (typeof phaseApprovalTypes)[number];

export const phaseApprovalPayloadSchema = z.object({
  ...common,
  type: z.enum(phaseApprovalTypes),
  batch: batchRef,
  phase: z.object({ id, name: z.string(), runbookVersion: z.int().positive() }),
  approval: z.object({
    expiresAt: z.iso.datetime({ offset: true }).nullable().meta({
      description:
        "When the approval timeout applies its outcome (approval_timeout); null when the phase waits for as long as it takes",
    }),
    timeoutOutcome: z
      .enum(["approve", "reject"])
      .nullable()
      .meta({ description: "What the timeout decides; null without a timeout" }),
    decidedBy: z.enum(["operator", "timeout"]).nullable().meta({
      description:
        "Who decided: an operator (named in the audit trail, GET /api/audit) or the timeout; null while awaiting",
    }),
  }),
});

export const memberFailedPayloadSchema = z.object({
  ...common,
  type: z.literal("member.failed"),
  batch: batchRef,
  member: z.object({
    id,
    stepName: z.string().nullable().meta({ description: "The step whose failure isolated the member" }),
    errorCode: z.string().nullable().meta({ description: "That step's reason code, e.g. graph.forbidden" }),
  }),
});

/** The alert's two events (issue 31, libs/domain/src/alerts); each occurrence sends each once. */
export const alertNotificationTypes = ["alert.raised", "alert.resolved"] as const;
export type AlertNotificationType = (typeof alertNotificationTypes)[number];

export const alertPayloadSchema = z.object({
  ...common,
  type: z.enum(alertNotificationTypes),
  alert: z.object({
    id,
    condition: z.enum(alertConditionIds),
    severity: z.enum(alertSeverities),
    summary: z.string(),
    subject: z.string().meta({
      description:
        "What it is about: runbook:<name>, batch:<id>, phase:<id>, pool:<workerId>, subscription:<topic>/<name>",
    }),
    runbookName: z.string().nullable().meta({
      description:
        "Its runbook, when it has one (that runbook's webhooks receive it too); null: global webhooks only",
    }),
    batchId: id.nullable(),
    details: z
      .record(z.string(), z.unknown())
      .meta({ description: "Counts, reason codes and ids; never member data" }),
    raisedAt: z.iso.datetime({ offset: true }),
    resolvedAt: z.iso.datetime({ offset: true }).nullable(),
  }),
});
export type AlertPayload = z.infer<typeof alertPayloadSchema>;

export const pingPayloadSchema = z.object({
  ...common,
  type: z.literal(pingType),
  webhook: z.object({ id }),
});

/** The JSON body of every webhook POST (schemaVersion 1), discriminated by `type`. */
export const notificationPayloadSchema = z
  .discriminatedUnion("type", [
    batchEndedPayloadSchema,
    phaseEndedPayloadSchema,
    phaseApprovalPayloadSchema,
    memberFailedPayloadSchema,
    alertPayloadSchema,
    pingPayloadSchema,
  ])
  .meta({ id: "NotificationPayload" });
export type NotificationPayload = z.infer<typeof notificationPayloadSchema>;
/** An event that fans out to subscribed webhooks (a ping goes to one webhook, directly). */
export type EventNotification = Exclude<NotificationPayload, { type: typeof pingType }>;

/** MessageType of the two messages on the `notifications` topic. */
export const notificationMessageTypes = {
  /** One per event occurrence: the notifier fans it out to the webhooks that subscribe to it. */
  notification: "notification",
  /** One per attempt of one delivery to one webhook. */
  webhookDelivery: "webhook-delivery",
} as const;

export const webhookDeliveryMessageSchema = z.object({
  DeliveryId: id,
  /** 1-based: the attempt this message asks for (a stale copy of an earlier one is ignored). */
  Attempt: z.int().positive(),
});
export type WebhookDeliveryMessage = z.infer<typeof webhookDeliveryMessageSchema>;

/**
 * The event, to the notifier. Its message id is the notification id: a relay that republishes it
 * is deduped by the bus, and the notifier's (webhook, notification) uniqueness makes even a copy
 * past the dedupe window create no second delivery.
 */
export function notificationEnvelope(payload: EventNotification): MessageEnvelope {
  return {
    messageId: `notification:${payload.id}`,
    topic: topics.notifications,
    properties: { [routingProperties.messageType]: notificationMessageTypes.notification },
    body: payload,
  };
}

/** One attempt of one delivery, delivered at `at` (absent: now); its own id per attempt. */
export function webhookDeliveryEnvelope(body: WebhookDeliveryMessage, at?: Date): MessageEnvelope {
  return {
    messageId: `webhook-delivery:${body.DeliveryId}:${body.Attempt}`,
    topic: topics.notifications,
    properties: { [routingProperties.messageType]: notificationMessageTypes.webhookDelivery },
    body,
    ...(at === undefined ? {} : { deliverAt: at }),
  };
}

/**
 * The notification id of an event: its type, the entity's id, and the id of the `events` row its
 * transition wrote. Deterministic for one occurrence, distinct for the next one (a phase reopened
 * by a redrive that ends again is a new occurrence with a new event row).
 */
export function notificationIdFor(type: NotificationType, entityId: number, eventId: number): string {
  return `${type}:${entityId}:${eventId}`;
}

/**
 * The runbook whose webhooks an event also goes to (global webhooks always get it): the batch's,
 * or an alert's own (null for an alert about no runbook: dead letters, a worker pool).
 */
export function notificationRunbook(payload: EventNotification): string | null {
  return "batch" in payload ? payload.batch.runbookName : payload.alert.runbookName;
}

/**
 * Why a webhook attempt failed: stable reason codes (never renamed), kept on the delivery and
 * shown by GET /api/webhooks/{id}/deliveries. The URL and the answer's body are never recorded.
 */
export const webhookErrorCodes = {
  /** No longer written (issue 25): a timeout is `webhook.unreachable` like every other no-answer; kept for old rows. */
  timeout: "webhook.timeout",
  /**
   * No answer: the address was refused by the outbound policy, DNS failed, the connection was
   * refused or reset, TLS failed, or the deadline passed. One code for all of them, so the
   * delivery log cannot be used to scan the server's network; the server's log has the reason.
   */
  unreachable: "webhook.unreachable",
  /** The signing secret could not be opened (sealed with a key this process does not know): nothing sent. */
  secretUnavailable: "webhook.secret_unavailable",
  /** A redirect (3xx): not followed, the configured URL must answer itself. */
  redirect: "webhook.redirect",
  /** Any other 4xx. */
  http4xx: "webhook.http_4xx",
  /** 410 Gone: the receiver says the endpoint is gone for good; the delivery is not retried. */
  gone: "webhook.gone",
  /** 5xx. */
  http5xx: "webhook.http_5xx",
  /** The webhook was disabled before this attempt. */
  disabled: "webhook.disabled",
} as const;
export type WebhookErrorCode = (typeof webhookErrorCodes)[keyof typeof webhookErrorCodes];

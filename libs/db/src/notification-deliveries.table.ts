import type { ColumnType, Generated, GeneratedAlways, Insertable, Selectable } from "kysely";
import type { CreatedAt, JsonColumn, NullableTimestamp } from "./column-types.ts";

/**
 * pending: no attempt yet; failed: the last attempt failed and another is scheduled
 * (next_attempt_at); delivered: a 2xx answer; gave_up: attempts exhausted, or the receiver
 * answered 410 Gone.
 */
export const deliveryStatuses = ["pending", "failed", "delivered", "gave_up"] as const;
export type DeliveryStatus = (typeof deliveryStatuses)[number];

/** One attempt, as kept on its delivery row. */
export interface DeliveryAttempt {
  readonly attempt: number;
  readonly at: string;
  readonly httpStatus: number | null;
  /** Null when delivered; else a webhook.* reason code. */
  readonly errorCode: string | null;
  readonly durationMs: number;
}

/** One notification to one webhook: the unit the notifier delivers and retries. */
export interface NotificationDeliveriesTable {
  id: GeneratedAlways<number>;
  webhookId: number;
  /** The event occurrence (unique with webhookId): a duplicate fan-out creates nothing. */
  notificationId: string;
  /** Notification type, or `ping`. */
  event: string;
  /** The body sent, fixed at creation so every attempt sends (and signs) the same bytes. */
  payload: JsonColumn<unknown>;
  status: ColumnType<DeliveryStatus, DeliveryStatus | undefined, DeliveryStatus>;
  /** Attempts made so far. */
  attempt: Generated<number>;
  attempts: ColumnType<DeliveryAttempt[], string | undefined, string>;
  /** Of the last attempt. */
  httpStatus: number | null;
  errorCode: string | null;
  nextAttemptAt: NullableTimestamp;
  createdAt: CreatedAt;
  finishedAt: NullableTimestamp;
}

export type NotificationDelivery = Selectable<NotificationDeliveriesTable>;
export type NewNotificationDelivery = Insertable<NotificationDeliveriesTable>;

import { appendAlertEvent, enqueueOutbox, hasSubscribedWebhook, type Alert, type Db } from "@matoolkit/db";
import {
  NOTIFICATION_SCHEMA_VERSION,
  alertDefinition,
  notificationEnvelope,
  notificationIdFor,
  type AlertConditionId,
  type AlertNotificationType,
  type AlertPayload,
} from "@matoolkit/domain";

/**
 * An alert raised or resolved (issue 31): its events row and, when a webhook takes it, its
 * `alert.raised` / `alert.resolved` notification, both in the caller's transaction, the one whose
 * guarded insert (update) raised (resolved) the alert: the event and the notification exist iff
 * the change committed, once.
 */
export async function recordAlertChange(
  trx: Db,
  alert: Alert,
  type: AlertNotificationType,
  at: Date,
): Promise<void> {
  const eventId = await appendAlertEvent(trx, alert, {
    from: type === "alert.raised" ? null : "open",
    to: type === "alert.raised" ? "open" : "resolved",
    at,
  });
  if (!(await hasSubscribedWebhook(trx, alert.runbookName, type))) return;
  await enqueueOutbox(trx, [notificationEnvelope(alertPayload(alert, type, eventId, at))]);
}

/** The webhook body of an alert's event. */
export function alertPayload(
  alert: Alert,
  type: AlertNotificationType,
  eventId: number,
  at: Date,
): AlertPayload {
  const definition = alertDefinition(alert.conditionId as AlertConditionId);
  return {
    schemaVersion: NOTIFICATION_SCHEMA_VERSION,
    id: notificationIdFor(type, alert.id, eventId),
    type,
    occurredAt: at.toISOString(),
    alert: {
      id: alert.id,
      condition: definition.id,
      severity: alert.severity,
      summary: definition.summary,
      subject: alert.subject,
      runbookName: alert.runbookName,
      batchId: alert.batchId,
      details: alert.details,
      raisedAt: new Date(alert.raisedAt).toISOString(),
      resolvedAt: alert.resolvedAt === null ? null : new Date(alert.resolvedAt).toISOString(),
    },
  };
}

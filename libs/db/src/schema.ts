import type { RunbookAutomationSettingsTable } from "./automation-settings.table.ts";
import type { BatchesTable } from "./batches.table.ts";
import type { EventsTable } from "./events.table.ts";
import type { IdempotencyKeysTable } from "./idempotency-keys.table.ts";
import type { InitExecutionsTable } from "./inits.table.ts";
import type { BatchMembersTable } from "./members.table.ts";
import type { OutboxTable } from "./outbox.table.ts";
import type { PhaseExecutionsTable } from "./phases.table.ts";
import type { RunbooksTable } from "./runbooks.table.ts";
import type { StepExecutionsTable } from "./steps.table.ts";
import type { ApiIdempotencyKeysTable } from "./api-idempotency-keys.table.ts";
import type { BatchSourceFingerprintsTable } from "./batch-source-fingerprints.table.ts";
import type { WebhooksTable } from "./webhooks.table.ts";
import type { NotificationDeliveriesTable } from "./notification-deliveries.table.ts";
import type { NotificationEmailsTable } from "./notification-emails.table.ts";
import type { AlertsTable } from "./alerts.table.ts";

/**
 * Every table, keyed by its camelCase name (CamelCasePlugin maps `batchMembers` to
 * `batch_members`). Raw SQL in this package uses the snake_case names.
 */
export interface Database {
  runbooks: RunbooksTable;
  runbookAutomationSettings: RunbookAutomationSettingsTable;
  batches: BatchesTable;
  batchMembers: BatchMembersTable;
  phaseExecutions: PhaseExecutionsTable;
  stepExecutions: StepExecutionsTable;
  initExecutions: InitExecutionsTable;
  events: EventsTable;
  outbox: OutboxTable;
  idempotencyKeys: IdempotencyKeysTable;
  apiIdempotencyKeys: ApiIdempotencyKeysTable;
  batchSourceFingerprints: BatchSourceFingerprintsTable;
  webhooks: WebhooksTable;
  notificationDeliveries: NotificationDeliveriesTable;
  notificationEmails: NotificationEmailsTable;
  alerts: AlertsTable;
}

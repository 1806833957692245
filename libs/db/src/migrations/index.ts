import type { Migration } from "kysely";
import { initialMigration } from "./0001_initial.ts";
import { cancellationMigration } from "./0002_cancellation.ts";
import { schedulerMigration } from "./0003_scheduler.ts";
import { hotPathsMigration } from "./0004_hot_paths.ts";
import { jobLeasesMigration } from "./0005_job_leases.ts";
import { readModelsMigration } from "./0006_read_models.ts";
import { membersPageMigration } from "./0007_members_page.ts";
import { phaseStepsCreatedMigration } from "./0008_phase_steps_created.ts";
import { operationsMigration } from "./0009_operations.ts";
import { operatorIdempotencyMigration } from "./0011_operator_idempotency.ts";
import { notificationsMigration } from "./0010_notifications.ts";
import { webhookTombstonesMigration } from "./0012_webhook_tombstones_sealed_secrets.ts";
import { busDeadLettersMigration } from "./0013_bus_dead_letters.ts";
import { skippedStepsMigration } from "./0014_skipped_steps.ts";
import { approvalGatesMigration } from "./0015_approval_gates.ts";
import { forEachItemsMigration } from "./0016_for_each_items.ts";
import { dropUnusedJobIdIndexesMigration } from "./0017_drop_unused_job_id_indexes.ts";
import { batchSearchMigration } from "./0018_batch_search.ts";
import { retentionMigration } from "./0019_retention.ts";
import { alertsMigration } from "./0020_alerts.ts";
import { notificationEmailsMigration } from "./0021_notification_emails.ts";
import { hotStepStatusMigration } from "./0022_hot_step_status.ts";
import { hotIdempotencyCompletionMigration } from "./0023_hot_idempotency_completion.ts";
import { dropBatchOutcomeIndexMigration } from "./0024_drop_batch_outcome_index.ts";

/** Applied in key order by migrate.ts; names sort lexically, hence the zero-padded prefix. */
export const migrations: Record<string, Migration> = {
  "0001_initial": initialMigration,
  "0002_cancellation": cancellationMigration,
  "0003_scheduler": schedulerMigration,
  "0004_hot_paths": hotPathsMigration,
  "0005_job_leases": jobLeasesMigration,
  "0006_read_models": readModelsMigration,
  "0007_members_page": membersPageMigration,
  "0008_phase_steps_created": phaseStepsCreatedMigration,
  "0009_operations": operationsMigration,
  "0011_operator_idempotency": operatorIdempotencyMigration,
  "0010_notifications": notificationsMigration,
  "0012_webhook_tombstones_sealed_secrets": webhookTombstonesMigration,
  "0013_bus_dead_letters": busDeadLettersMigration,
  "0014_skipped_steps": skippedStepsMigration,
  "0015_approval_gates": approvalGatesMigration,
  "0016_for_each_items": forEachItemsMigration,
  "0017_drop_unused_job_id_indexes": dropUnusedJobIdIndexesMigration,
  "0018_batch_search": batchSearchMigration,
  "0019_retention": retentionMigration,
  "0020_alerts": alertsMigration,
  "0021_notification_emails": notificationEmailsMigration,
  "0022_hot_step_status": hotStepStatusMigration,
  "0023_hot_idempotency_completion": hotIdempotencyCompletionMigration,
  "0024_drop_batch_outcome_index": dropBatchOutcomeIndexMigration,
};

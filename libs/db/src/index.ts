// Connection, migrations and the embedded server.
export * from "./connection.ts";
export * from "./embedded-postgres.ts";
export * from "./migrate.ts";
export * from "./schema-status.ts";
export { migrations } from "./migrations/index.ts";
export * from "./in-transaction.ts";
export * from "./json.ts";

// Tables: camelCase in TypeScript, snake_case in SQL (CamelCasePlugin, see connection.ts).
export type * from "./column-types.ts";
export type * from "./schema.ts";
export type * from "./runbooks.table.ts";
export type * from "./automation-settings.table.ts";
export type * from "./batches.table.ts";
export type * from "./members.table.ts";
export type * from "./phases.table.ts";
export type * from "./execution-columns.ts";
export type * from "./steps.table.ts";
export type * from "./inits.table.ts";
export type * from "./events.table.ts";
export type * from "./outbox.table.ts";
export type * from "./idempotency-keys.table.ts";
export type * from "./api-idempotency-keys.table.ts";
export type * from "./batch-source-fingerprints.table.ts";
export type * from "./webhooks.table.ts";
export * from "./notification-deliveries.table.ts";

// Repositories: every function takes the Db (or a Transaction) first, so callers compose them.
export * from "./runbooks.repository.ts";
export * from "./automation-settings.repository.ts";
export * from "./batches.repository.ts";
export * from "./automated-batches.repository.ts";
export * from "./member-sync.repository.ts";
export * from "./members.repository.ts";
export * from "./phases.repository.ts";
export type { ExecutionSet, ExecutionTransitionOptions, PollDispatch } from "./execution-repository.ts";
export * from "./steps.repository.ts";
export * from "./step-progression.repository.ts";
export * from "./for-each.repository.ts";
export * from "./inits.repository.ts";
export * from "./events.repository.ts";
export * from "./rollback-events.ts";
export * from "./member-counts.repository.ts";
export * from "./batch-cancellation.ts";
export * from "./batch-pause.repository.ts";
export * from "./outbox.repository.ts";
export * from "./runbook-deactivation.repository.ts";
export * from "./operator-members.repository.ts";
export * from "./batch-report.repository.ts";
export * from "./batch-grid.repository.ts";
export * from "./api-idempotency-keys.repository.ts";
export * from "./batch-duplicates.repository.ts";
export * from "./webhooks.repository.ts";
export * from "./notification-deliveries.repository.ts";
export * from "./outcomes.repository.ts";
export * from "./redrive.repository.ts";
export * from "./secret-masking.repository.ts";

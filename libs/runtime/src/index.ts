export * from "./ports/index.ts";
export * from "./topology.ts";
export { createLogger } from "./logger.ts";
export type { Logger, LoggerOptions, LogLevel } from "./logger.ts";
export { serializeErrorSafely } from "./serialize-error-safely.ts";
export { createEmbeddedRuntime } from "./embedded/create-embedded-runtime.ts";
export { createPostgresIdempotencyStore } from "./embedded/postgres-idempotency-store.ts";
export type { EmbeddedRuntime, EmbeddedRuntimeOptions } from "./embedded/create-embedded-runtime.ts";
export type { BusTuning } from "./embedded/bus-tuning.ts";
export { installBusSchema } from "./embedded/install-bus-schema.ts";
export { startOutboxRelay, outboxNotifyChannel } from "./outbox/outbox-relay.ts";
export { createDurableTaskWorkflowEngine } from "./embedded/durabletask-workflow-engine.ts";
export type { DurableTaskEngineOptions } from "./embedded/durabletask-workflow-engine.ts";
export type { OutboxRelay, OutboxRelayOptions } from "./outbox/outbox-relay.ts";
// The adapter contract suites import vitest, so they are not exported here (production code
// imports this entry point): see ../test/contract/index.ts.
export { createDaprRuntime } from "./dapr/create-dapr-runtime.ts";
export type { DaprRuntime, DaprRuntimeOptions, DaprTimersKind } from "./dapr/create-dapr-runtime.ts";
export type { DaprJobsApiVersion } from "./dapr/dapr-jobs-client.ts";
export { createDaprWorkflowEngine } from "./dapr/workflow/dapr-workflow-engine.ts";
export type { DaprWorkflowEngineOptions } from "./dapr/workflow/dapr-workflow-engine.ts";
export { announceSubscriptions } from "./dapr/subscription-announcement.ts";
export type { DaprSubscriptionEntry } from "./dapr/subscription-announcement.ts";
export * from "./telemetry/index.ts";

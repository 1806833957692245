export * from "./batch-lifecycle.ts";
export * from "./poll-sweep.ts";
export * from "./preview/preview-query.ts";
export * from "./scheduler-config.ts";
export * from "./scheduler-service.ts";
export { parseBatchTime, roundToFiveMinutes } from "./source/batch-time.ts";
export { SourceRowError, toSourceRows } from "./source/source-rows.ts";
export type { RunbookTickResult } from "./tick/process-runbook.ts";
export { runSchedulerTick, type RunbookOutcome, type SchedulerTickDeps } from "./tick/run-scheduler-tick.ts";

export * from "./batch-lifecycle.ts";
export * from "./poll-sweep.ts";
export * from "./scheduler-config.ts";
export * from "./scheduler-service.ts";
export type { RunbookTickResult } from "./tick/process-runbook.ts";
export { runSchedulerTick, type RunbookOutcome, type SchedulerTickDeps } from "./tick/run-scheduler-tick.ts";
export * from "./compose.ts";

export * from "./orchestrator-service.ts";
export { checkBatchCompletion, checkPhaseCompletion } from "./completion.ts";
export * from "./orchestrator-config.ts";
export { progressBatch } from "./workflow/progress-batch.ts";
export { DEFAULT_STEP_TIMEOUT_SECONDS, timeOutStuckExecutions } from "./stuck-executions.ts";
export { RESEND_AFTER_SECONDS, resendStalledJobs } from "./stalled-jobs.ts";
export { DEFAULT_PHASE_START_CHUNK, DEFAULT_PHASE_START_WINDOW } from "./handlers/phase-due.ts";
export * from "./compose.ts";

export * from "./execute-job.ts";
export * from "./functions/diagnostics.ts";
export * from "./functions/function-registry.ts";
export * from "./functions/worker-function.ts";
export { JOB_MEMORY_SECONDS } from "./handle-job-delivery.ts";
export * from "./throttle-retry.ts";
export * from "./wire-result.ts";
export * from "./worker-config.ts";
export * from "./worker-service.ts";

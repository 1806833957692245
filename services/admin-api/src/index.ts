export * from "./admin-api-config.ts";
export * from "./admin-api-service.ts";
export * from "./app.ts";
export * from "./auth/index.ts";
export * from "./compose.ts";
export type { TenantChange, TenantChangeSource } from "./routes/tenant-changes.routes.ts";
export type { WorkerPacingReport, WorkerPacingSource } from "./routes/worker-pacing.routes.ts";

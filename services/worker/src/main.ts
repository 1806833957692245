// Entry point: one worker pool (WorkerId) alone. It needs the bus and the idempotency store, not SQL
// tables of its own; in embedded mode both live in PostgreSQL.
import { bootPlatform, platformConfigFromEnv, runUntilSignalled } from "@matoolkit/platform";
import { startWorkerService } from "./worker-service.ts";
import { buildWorkerRuntime } from "./worker-runtime.ts";
import { tenantConfigFromEnv } from "./tenant/tenant-config.ts";
import { workerConfigFromEnv } from "./worker-config.ts";

await runUntilSignalled("worker", async ({ requestShutdown }) => {
  // Configuration first: a bad variable fails before any database or tenant is touched.
  const { workerId } = workerConfigFromEnv(process.env);
  tenantConfigFromEnv(process.env);
  const platform = await bootPlatform(platformConfigFromEnv(process.env), `worker-${workerId}`);
  let runtime: Awaited<ReturnType<typeof buildWorkerRuntime>>;
  try {
    runtime = await buildWorkerRuntime(process.env, platform.logger);
  } catch (error) {
    await platform.stop();
    throw error;
  }
  const { config } = runtime;
  const worker = await startWorkerService({
    bus: platform.bus,
    idempotency: platform.idempotency,
    logger: platform.logger,
    workerId: config.workerId,
    concurrency: config.concurrency,
    jobTimeoutMs: config.jobTimeoutSeconds * 1000,
    leaseSeconds: config.leaseSeconds,
    registry: runtime.registry,
    tenant: runtime.tenant,
    idleExitMs: runtime.idleExitMs,
    // 000 "Scale-to-Zero": the same graceful shutdown as SIGTERM, exit code 0.
    onIdle: () => requestShutdown(`idle for ${config.idleExitSeconds}s`),
  });
  await platform.start();
  return async () => {
    await worker.stop();
    await runtime.close();
    await platform.stop();
  };
});

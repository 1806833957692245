// Entry point: one worker pool (WorkerId) alone. It needs the bus and the idempotency store, not SQL
// tables of its own; in embedded mode both live in PostgreSQL.
import { bootPlatform, platformConfigFromEnv, runUntilSignalled } from "@matoolkit/platform";
import { createDiagnosticFunctions } from "./functions/diagnostics.ts";
import { createFunctionRegistry } from "./functions/function-registry.ts";
import { workerConfigFromEnv } from "./worker-config.ts";
import { startWorkerService } from "./worker-service.ts";

await runUntilSignalled("worker", async () => {
  const config = workerConfigFromEnv(process.env);
  const platform = await bootPlatform(platformConfigFromEnv(process.env), `worker-${config.workerId}`);
  const worker = await startWorkerService({
    bus: platform.bus,
    idempotency: platform.idempotency,
    logger: platform.logger,
    workerId: config.workerId,
    concurrency: config.concurrency,
    jobTimeoutMs: config.jobTimeoutSeconds * 1000,
    registry: createFunctionRegistry(createDiagnosticFunctions()),
  });
  await platform.start();
  return async () => {
    await worker.stop();
    await platform.stop();
  };
});

import {
  authConfigFromEnv,
  createVerifierForConfig,
  startAdminApiService,
  adminApiConfigFromEnv,
} from "@matoolkit/admin-api";
import { startOrchestratorService } from "@matoolkit/orchestrator";
import { bootPlatform, platformConfigFromEnv, type Platform } from "@matoolkit/platform";
import { schedulerConfigFromEnv, startSchedulerService } from "@matoolkit/scheduler";
import {
  createDiagnosticFunctions,
  createFunctionRegistry,
  startWorkerService,
  workerConfigFromEnv,
} from "@matoolkit/worker";

export interface RunningSystem {
  readonly platform: Platform;
  readonly apiUrl: string;
  stop(): Promise<void>;
}

/**
 * The four services in one process on one platform (embedded mode by default): what `npm start`
 * runs on a fresh clone, and what the end-to-end test drives. Each service is started exactly as
 * its own main.ts does, so the single-process and multi-process deployments share every line.
 */
export async function startAll(env: Record<string, string | undefined>): Promise<RunningSystem> {
  // Parse every piece of configuration before starting anything: a typo fails in milliseconds.
  const platformConfig = platformConfigFromEnv(env);
  const authConfig = authConfigFromEnv(env);
  const apiConfig = adminApiConfigFromEnv(env);
  const schedulerConfig = schedulerConfigFromEnv(env);
  const workerConfig = workerConfigFromEnv(env);

  const platform = await bootPlatform(platformConfig, "matoolkit");
  const { db, bus, timers, idempotency, logger } = platform;
  await startOrchestratorService({ db, bus, logger });
  const worker = await startWorkerService({
    bus,
    idempotency,
    logger,
    workerId: workerConfig.workerId,
    concurrency: workerConfig.concurrency,
    jobTimeoutMs: workerConfig.jobTimeoutSeconds * 1000,
    registry: createFunctionRegistry(createDiagnosticFunctions()),
  });
  await startSchedulerService({ db, timers, logger, ...schedulerConfig });
  const api = await startAdminApiService({
    db,
    bus,
    verifier: await createVerifierForConfig(authConfig),
    logger,
    ...apiConfig,
  });
  return {
    platform,
    apiUrl: api.url,
    stop: async () => {
      await api.close();
      await worker.stop();
      await platform.stop();
    },
  };
}

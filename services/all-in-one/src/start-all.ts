import {
  authConfigFromEnv,
  createVerifierForConfig,
  startAdminApiService,
  adminApiConfigFromEnv,
} from "@matoolkit/admin-api";
import { createDataSourceClient, csvDirFromEnv } from "@matoolkit/datasources";
import { orchestratorConfigFromEnv, startOrchestratorService } from "@matoolkit/orchestrator";
import {
  azureCredentialPlanFromEnv,
  bootPlatform,
  lazyAzureCredential,
  platformConfigFromEnv,
  type Platform,
} from "@matoolkit/platform";
import { nudgeBatchWorkflows, schedulerConfigFromEnv, startSchedulerService } from "@matoolkit/scheduler";
import {
  buildWorkerRuntime,
  tenantConfigFromEnv,
  startWorkerService,
  workerConfigFromEnv,
} from "@matoolkit/worker";

export interface RunningSystem {
  readonly platform: Platform;
  readonly apiUrl: string;
  /** The worker's target tenant, safe to show (e.g. the simulated tenant's URL). */
  readonly tenantDescription: string;
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
  tenantConfigFromEnv(env);
  const orchestratorConfig = orchestratorConfigFromEnv(env);
  const azureCredentialPlan = azureCredentialPlanFromEnv(env);
  const csvDir = csvDirFromEnv(env, platformConfig.dataDir);

  const platform = await bootPlatform(platformConfig, "matoolkit");
  const { db, bus, timers, idempotency, logger } = platform;
  let workerRuntime: Awaited<ReturnType<typeof buildWorkerRuntime>>;
  try {
    // Custom functions and the tenant (an in-process simulated one with MATOOLKIT_TENANT=simulated).
    workerRuntime = await buildWorkerRuntime(env, logger);
  } catch (error) {
    await platform.stop();
    throw error;
  }
  const orchestrator = await startOrchestratorService({
    db,
    bus,
    logger,
    concurrency: orchestratorConfig.concurrency,
    workflows: {
      engine: platform.workflows,
      recheckSeconds: orchestratorConfig.workflowRecheckSeconds,
      reconcileSeconds: orchestratorConfig.workflowReconcileSeconds,
    },
  });
  const worker = await startWorkerService({
    bus,
    idempotency,
    logger,
    workerId: workerConfig.workerId,
    concurrency: workerConfig.concurrency,
    jobTimeoutMs: workerConfig.jobTimeoutSeconds * 1000,
    leaseSeconds: workerConfig.leaseSeconds,
    registry: workerRuntime.registry,
    tenant: workerRuntime.tenant,
    // No idle exit here: the other services of this process are not idle when the worker is.
  });
  // One client for the scheduler's ticks and the API's query preview; runbooks name env vars.
  const dataSources = createDataSourceClient({
    env,
    baseDir: csvDir,
    credential: lazyAzureCredential(azureCredentialPlan),
  });
  await startSchedulerService({
    db,
    timers,
    logger,
    dataSources,
    lifecycle: nudgeBatchWorkflows(db),
    ...schedulerConfig,
  });
  const api = await startAdminApiService({
    db,
    bus,
    verifier: await createVerifierForConfig(authConfig, { logger }),
    logger,
    dataSources,
    ...apiConfig,
    busReady: platform.ready,
  });
  // Every subscription is in place: open the runtime to deliveries (Dapr reads them once). Only
  // then the workflows: up to Dapr 1.17 the sidecar answers workflow calls once that port is open.
  await platform.start();
  await orchestrator.startWorkflows();
  return {
    platform,
    apiUrl: api.url,
    tenantDescription: workerRuntime.tenantDescription,
    stop: async () => {
      await api.close();
      await worker.stop();
      await workerRuntime.close();
      await orchestrator.stop();
      await platform.stop();
    },
  };
}

import { adminApiPart } from "@matoolkit/admin-api";
import { orchestratorPart } from "@matoolkit/orchestrator";
import {
  bootOptionsFor,
  bootPlatform,
  dataSourcesFromEnv,
  platformConfigFromEnv,
  startServices,
  type Platform,
} from "@matoolkit/platform";
import { schedulerPart } from "@matoolkit/scheduler";
import { workerPart } from "@matoolkit/worker";

export interface RunningSystem {
  readonly platform: Platform;
  readonly apiUrl: string;
  /** The worker's target tenant, safe to show (e.g. the simulated tenant's URL). */
  readonly tenantDescription: string;
  stop(): Promise<void>;
}

/**
 * The four services in one process on one platform (embedded mode by default): what `npm start`
 * runs on a fresh clone, and what the end-to-end test drives. Each service is started by the same
 * part (its package's compose.ts) its own main.ts starts, so the single-process and multi-process
 * deployments share every line of wiring. The schema is migrated at start unless
 * MATOOLKIT_MIGRATE_ON_START=false: one process, no separate deploy step.
 */
export async function startAll(env: Record<string, string | undefined>): Promise<RunningSystem> {
  // Parse every piece of configuration before starting anything: a typo fails in milliseconds.
  const platformConfig = platformConfigFromEnv(env, { migrateOnStartDefault: true });
  // One client for the scheduler's ticks and the API's query preview.
  const dataSources = dataSourcesFromEnv(env, platformConfig.dataDir);
  const parts = [
    orchestratorPart(env),
    // No idle exit here: the other services of this process are not idle when the worker is.
    workerPart(env),
    schedulerPart(env, { dataSources }),
    adminApiPart(env, { dataSources }),
  ] as const;
  const { usesSql: _sql, ...boot } = bootOptionsFor(parts);
  const platform = await bootPlatform(platformConfig, "matoolkit", boot);
  const { started, stop } = await startServices(platform, parts);
  const [, worker, , api] = started;
  return { platform, apiUrl: api.url, tenantDescription: worker.tenantDescription, stop };
}

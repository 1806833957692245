import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { adminApiPart, type TenantChangeSource } from "@matoolkit/admin-api";
import { orchestratorPart } from "@matoolkit/orchestrator";
import {
  bootOptionsFor,
  bootPlatform,
  dataSourcesFromEnv,
  platformConfigFromEnv,
  startServices,
  type Platform,
  type RuntimePlatform,
  type ServicePart,
} from "@matoolkit/platform";
import { schedulerPart } from "@matoolkit/scheduler";
import { tenantConfigFromEnv, workerPart, type StartedWorker, type TenantChangeLog } from "@matoolkit/worker";
import { chooseAllInOneTenant, type AllInOneTenantChoice } from "./default-tenant.ts";

export interface RunningSystem {
  readonly platform: Platform;
  readonly apiUrl: string;
  /** The worker's target tenant, safe to show (e.g. the simulated tenant's URL). */
  readonly tenantDescription: string;
  /** Why the worker has this tenant (chooseAllInOneTenant): `rehearsal` is npm start's default. */
  readonly tenantChoice: AllInOneTenantChoice["reason"];
  /** Whether the worker runs against a simulated tenant (nothing real is touched). */
  readonly simulatedTenant: boolean;
  stop(): Promise<void>;
}

/**
 * The example tenant the Quickstart's runbook expects: beside the sources (npm start), else in the
 * working directory (the image copies examples/ to /app, its working directory).
 */
function exampleSeedPath(): string {
  const besideSources = fileURLToPath(new URL("../../../examples/fabrikam-tenant.json", import.meta.url));
  return existsSync(besideSources) ? besideSources : resolve("examples/fabrikam-tenant.json");
}

/**
 * The four services in one process on one platform (embedded mode by default): what `npm start`
 * runs on a fresh clone, and what the end-to-end test drives. Each service is started by the same
 * part (its package's compose.ts) its own main.ts starts, so the single-process and multi-process
 * deployments share every line of wiring. The schema is migrated at start unless
 * MATOOLKIT_MIGRATE_ON_START=false: one process, no separate deploy step.
 */
export async function startAll(given: Record<string, string | undefined>): Promise<RunningSystem> {
  // Parse every piece of configuration before starting anything: a typo fails in milliseconds.
  const platformConfig = platformConfigFromEnv(given, { migrateOnStartDefault: true });
  // No tenant configured on the embedded database: the example's simulated tenant (a rehearsal).
  const tenant = chooseAllInOneTenant(given, {
    embeddedDatabase: platformConfig.databaseUrl === undefined,
    production: given.NODE_ENV === "production",
    exampleSeedPath: exampleSeedPath(),
  });
  const { env } = tenant;
  // The worker starts first, the admin API reads its tenant's change log when asked.
  let changeLog: TenantChangeLog | undefined;
  const tenantChanges: TenantChangeSource = async () => {
    if (changeLog === undefined) throw new Error("the worker's tenant has no change log");
    return changeLog();
  };
  // One client for the scheduler's ticks and the API's query preview.
  const dataSources = dataSourcesFromEnv(env, platformConfig.dataDir);
  const worker = workerPart(env);
  const parts = [
    // Started before the admin API: with the secrets key in Key Vault, it creates a missing one.
    // Email notifications, if on, go through the worker's tenant (started just after).
    orchestratorPart(env, { createsSecretsKey: true, tenantGraph: worker.tenantGraph }),
    // No idle exit here: the other services of this process are not idle when the worker is.
    capturingChangeLog(worker, (log) => (changeLog = log)),
    schedulerPart(env, { dataSources }),
    // The API runs the tenant check with the worker of this process (ARCHITECTURE.md), reads
    // its simulated tenant's change log, and shows its pacing (GET /api/worker/pacing).
    adminApiPart(env, {
      dataSources,
      tenantChecker: worker.checkTenant,
      workerPacing: worker.pacing,
      ...(tenantConfigFromEnv(env).mode === "simulated" ? { tenantChanges } : {}),
    }),
  ] as const;
  const { usesSql: _sql, ...boot } = bootOptionsFor(parts);
  const platform = await bootPlatform(platformConfig, "matoolkit", boot);
  const { started, stop } = await startServices(platform, parts);
  const [, startedWorker, , api] = started;
  return {
    platform,
    apiUrl: api.url,
    tenantDescription: startedWorker.tenantDescription,
    tenantChoice: tenant.reason,
    simulatedTenant: startedWorker.tenantChangeLog !== undefined,
    stop,
  };
}

/** The worker part, handing over its tenant's change log as soon as it has started. */
function capturingChangeLog(
  part: ServicePart<RuntimePlatform, StartedWorker>,
  onStarted: (log: TenantChangeLog | undefined) => void,
): ServicePart<RuntimePlatform, StartedWorker> {
  return {
    ...part,
    async start(platform) {
      const started = await part.start(platform);
      onStarted(started.tenantChangeLog);
      return started;
    },
  };
}

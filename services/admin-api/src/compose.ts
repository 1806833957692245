import type { TenantChecker } from "@matoolkit/domain";
import type { DataSourceClient } from "@matoolkit/datasources";
import {
  keyVaultAccessFromEnv,
  loadSecretsAtStart,
  platformConfigFromEnv,
  retentionConfigFromEnv,
  sealWebhookSecrets,
  secretKeySourceFromEnv,
  webhookOutboundPolicyFromEnv,
  type Platform,
  type ServicePart,
  type StartedService,
} from "@matoolkit/platform";
import { adminApiConfigFromEnv } from "./admin-api-config.ts";
import { startAdminApiService } from "./admin-api-service.ts";
import { authConfigFromEnv, createVerifierForConfig, signInConfigOf } from "./auth/index.ts";
import type { TenantChangeSource } from "./routes/tenant-changes.routes.ts";
import type { WorkerPacingSource } from "./routes/worker-pacing.routes.ts";

export interface StartedAdminApi extends StartedService {
  /** Where the API listens (http://host:port, without /api). */
  readonly url: string;
}

/**
 * The admin API as its main.ts and all-in-one start it; configuration (listener, sign-in) is
 * read here, up front. `dataSources` runs the query preview against the sources the scheduler
 * reads (all-in-one shares one client between them).
 */
export function adminApiPart(
  env: Record<string, string | undefined>,
  deps: {
    readonly dataSources: DataSourceClient;
    /** The worker's pre-flight check, when this process also runs the worker (all-in-one). */
    readonly tenantChecker?: TenantChecker;
    /** The worker's simulated tenant's write log, when the worker runs in this process. */
    readonly tenantChanges?: TenantChangeSource;
    /** The pacing of the workers of this process (GET /api/worker/pacing). */
    readonly workerPacing?: WorkerPacingSource;
  },
): ServicePart<Platform, StartedAdminApi> {
  const authConfig = authConfigFromEnv(env);
  const apiConfig = adminApiConfigFromEnv(env);
  // POST /api/purge uses the scheduler's policy: both read the same two variables.
  const retention = retentionConfigFromEnv(env);
  // Webhooks: where their URLs may point, and the key that seals their secrets.
  const outbound = webhookOutboundPolicyFromEnv(env);
  const { dataDir, databaseUrl } = platformConfigFromEnv(env);
  const keySource = secretKeySourceFromEnv(env, dataDir);
  // In Key Vault, the admin API creates the key on its first start; other services only read it.
  const keyVault = keyVaultAccessFromEnv(env, keySource, { mayCreate: true });
  return {
    name: "admin-api",
    needs: { sql: true, outboxRelay: true, workerJobDeadLetters: false },
    async start(platform): Promise<StartedAdminApi> {
      const secrets = await loadSecretsAtStart(keySource, {
        sharedDatabase: databaseUrl !== undefined,
        logger: platform.logger,
        keyVault,
      });
      await sealWebhookSecrets(platform.db, secrets, platform.logger);
      const api = await startAdminApiService({
        outbound,
        secrets,
        db: platform.db,
        bus: platform.bus,
        verifier: await createVerifierForConfig(authConfig, { logger: platform.logger }),
        logger: platform.logger,
        dataSources: deps.dataSources,
        ...apiConfig,
        retention,
        // GET /api/auth/config: how the dashboard signs in (no secrets).
        signIn: signInConfigOf(authConfig),
        busReady: platform.ready,
        ...(deps.tenantChecker === undefined ? {} : { tenantChecker: deps.tenantChecker }),
        ...(deps.tenantChanges === undefined ? {} : { tenantChanges: deps.tenantChanges }),
        ...(deps.workerPacing === undefined ? {} : { workerPacing: deps.workerPacing }),
      });
      return {
        url: api.url,
        afterPlatformStart: async () => platform.logger.info({ url: api.url }, "admin API listening"),
        stop: () => api.close(),
      };
    },
  };
}

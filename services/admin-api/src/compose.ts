import type { DataSourceClient } from "@matoolkit/datasources";
import type { Platform, ServicePart, StartedService } from "@matoolkit/platform";
import { adminApiConfigFromEnv } from "./admin-api-config.ts";
import { startAdminApiService } from "./admin-api-service.ts";
import { authConfigFromEnv, createVerifierForConfig, signInConfigOf } from "./auth/index.ts";

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
  deps: { readonly dataSources: DataSourceClient },
): ServicePart<Platform, StartedAdminApi> {
  const authConfig = authConfigFromEnv(env);
  const apiConfig = adminApiConfigFromEnv(env);
  return {
    name: "admin-api",
    needs: { sql: true, outboxRelay: true, workerJobDeadLetters: false },
    async start(platform): Promise<StartedAdminApi> {
      const api = await startAdminApiService({
        db: platform.db,
        bus: platform.bus,
        verifier: await createVerifierForConfig(authConfig, { logger: platform.logger }),
        logger: platform.logger,
        dataSources: deps.dataSources,
        ...apiConfig,
        // GET /api/auth/config: how the dashboard signs in (no secrets).
        signIn: signInConfigOf(authConfig),
        busReady: platform.ready,
      });
      return {
        url: api.url,
        afterPlatformStart: async () => platform.logger.info({ url: api.url }, "admin API listening"),
        stop: () => api.close(),
      };
    },
  };
}

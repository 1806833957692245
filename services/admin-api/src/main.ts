// Entry point: the admin API alone, against a shared DATABASE_URL (or the embedded database).
import { createDataSourceClient, csvDirFromEnv } from "@matoolkit/datasources";
import {
  azureCredentialPlanFromEnv,
  bootPlatform,
  lazyAzureCredential,
  platformConfigFromEnv,
  runUntilSignalled,
} from "@matoolkit/platform";
import { adminApiConfigFromEnv } from "./admin-api-config.ts";
import { startAdminApiService } from "./admin-api-service.ts";
import { authConfigFromEnv, createVerifierForConfig } from "./auth/index.ts";

await runUntilSignalled("admin-api", async () => {
  const platform = await bootPlatform(platformConfigFromEnv(process.env), "admin-api");
  const api = await startAdminApiService({
    db: platform.db,
    bus: platform.bus,
    verifier: await createVerifierForConfig(authConfigFromEnv(process.env), { logger: platform.logger }),
    logger: platform.logger,
    // The query preview reads the same sources as the scheduler: env-var names, csv files below MATOOLKIT_CSV_DIR.
    dataSources: createDataSourceClient({
      env: process.env,
      baseDir: csvDirFromEnv(process.env, platformConfigFromEnv(process.env).dataDir),
      credential: lazyAzureCredential(azureCredentialPlanFromEnv(process.env)),
    }),
    ...adminApiConfigFromEnv(process.env),
    busReady: platform.ready,
  });
  await platform.start();
  platform.logger.info({ url: api.url }, "admin API listening");
  return async () => {
    await api.close();
    await platform.stop();
  };
});

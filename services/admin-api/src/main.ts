// Entry point: the admin API alone, against a shared DATABASE_URL (or the embedded database).
import { createDataSourceClient } from "@matoolkit/datasources";
import { bootPlatform, platformConfigFromEnv, runUntilSignalled } from "@matoolkit/platform";
import { adminApiConfigFromEnv } from "./admin-api-config.ts";
import { startAdminApiService } from "./admin-api-service.ts";
import { authConfigFromEnv, createVerifierForConfig } from "./auth/index.ts";

await runUntilSignalled("admin-api", async () => {
  const platform = await bootPlatform(platformConfigFromEnv(process.env), "admin-api");
  const api = await startAdminApiService({
    db: platform.db,
    bus: platform.bus,
    verifier: await createVerifierForConfig(authConfigFromEnv(process.env)),
    logger: platform.logger,
    // The query preview reads the same sources as the scheduler: env-var names, csv paths from here.
    dataSources: createDataSourceClient({ env: process.env, baseDir: process.cwd() }),
    ...adminApiConfigFromEnv(process.env),
  });
  await platform.start();
  platform.logger.info({ url: api.url }, "admin API listening");
  return async () => {
    await api.close();
    await platform.stop();
  };
});

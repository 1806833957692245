// Entry point: the scheduler alone, against a shared DATABASE_URL (or the embedded database).
import { createDataSourceClient, csvDirFromEnv } from "@matoolkit/datasources";
import {
  azureCredentialPlanFromEnv,
  bootPlatform,
  lazyAzureCredential,
  platformConfigFromEnv,
  runUntilSignalled,
} from "@matoolkit/platform";
import { schedulerConfigFromEnv } from "./scheduler-config.ts";
import { nudgeBatchWorkflows } from "./batch-lifecycle.ts";
import { startSchedulerService } from "./scheduler-service.ts";

await runUntilSignalled("scheduler", async () => {
  const config = schedulerConfigFromEnv(process.env);
  const platform = await bootPlatform(platformConfigFromEnv(process.env), "scheduler");
  await startSchedulerService({
    db: platform.db,
    timers: platform.timers,
    logger: platform.logger,
    // Runbooks name environment variables for their connections; csv paths are relative to MATOOLKIT_CSV_DIR.
    // Dataverse and Databricks as the identity MATOOLKIT_AZURE_CREDENTIAL chooses (a bad value stops the start).
    dataSources: createDataSourceClient({
      env: process.env,
      baseDir: csvDirFromEnv(process.env, platformConfigFromEnv(process.env).dataDir),
      credential: lazyAzureCredential(azureCredentialPlanFromEnv(process.env)),
    }),
    lifecycle: nudgeBatchWorkflows(platform.db),
    ...config,
  });
  await platform.start();
  platform.logger.info(config, "scheduler running");
  return () => platform.stop();
});

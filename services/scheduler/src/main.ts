// Entry point: the scheduler alone, against a shared DATABASE_URL (or the embedded database).
import { bootPlatform, platformConfigFromEnv, runUntilSignalled } from "@matoolkit/platform";
import { schedulerConfigFromEnv } from "./scheduler-config.ts";
import { startSchedulerService } from "./scheduler-service.ts";

await runUntilSignalled("scheduler", async () => {
  const config = schedulerConfigFromEnv(process.env);
  const platform = await bootPlatform(platformConfigFromEnv(process.env), "scheduler");
  await startSchedulerService({
    db: platform.db,
    timers: platform.timers,
    logger: platform.logger,
    ...config,
  });
  platform.logger.info({ pollSweepSeconds: config.pollSweepSeconds }, "scheduler running");
  return () => platform.stop();
});

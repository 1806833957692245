import type { DataSourceClient } from "@matoolkit/datasources";
import {
  retentionConfigFromEnv,
  type Platform,
  type ServicePart,
  type StartedService,
} from "@matoolkit/platform";
import { nudgeBatchWorkflows } from "./batch-lifecycle.ts";
import { schedulerConfigFromEnv } from "./scheduler-config.ts";
import { startSchedulerService } from "./scheduler-service.ts";

/** The scheduler as its main.ts and all-in-one start it; configuration is read here, up front. */
export function schedulerPart(
  env: Record<string, string | undefined>,
  deps: { readonly dataSources: DataSourceClient },
): ServicePart<Platform> {
  const config = { ...schedulerConfigFromEnv(env), ...retentionConfigFromEnv(env) };
  return {
    name: "scheduler",
    needs: { sql: true, outboxRelay: true, workerJobDeadLetters: false },
    async start(platform): Promise<StartedService> {
      await startSchedulerService({
        db: platform.db,
        timers: platform.timers,
        logger: platform.logger,
        dataSources: deps.dataSources,
        lifecycle: nudgeBatchWorkflows(platform.db),
        ...config,
      });
      return {
        afterPlatformStart: async () => platform.logger.info(config, "scheduler running"),
        // Its ticks are timers of the platform: they stop with it.
        stop: async () => undefined,
      };
    },
  };
}

import type { Platform, ServicePart, StartedService } from "@matoolkit/platform";
import { orchestratorConfigFromEnv } from "./orchestrator-config.ts";
import { startOrchestratorService } from "./orchestrator-service.ts";

/**
 * The orchestrator as its main.ts and all-in-one start it. Configuration is read here, before any
 * platform is booted: a bad variable fails in milliseconds. It hosts the batch workflows (one
 * orchestrator process per database in embedded mode: the in-process engine does not share
 * instances between processes) and, on Dapr, records the worker pools' dead letters.
 */
export function orchestratorPart(env: Record<string, string | undefined>): ServicePart<Platform> {
  const config = orchestratorConfigFromEnv(env);
  return {
    name: "orchestrator",
    needs: { sql: true, outboxRelay: true, workerJobDeadLetters: true },
    async start(platform): Promise<StartedService> {
      const orchestrator = await startOrchestratorService({
        db: platform.db,
        bus: platform.bus,
        logger: platform.logger,
        concurrency: config.concurrency,
        workflows: {
          engine: platform.workflows,
          recheckSeconds: config.workflowRecheckSeconds,
          reconcileSeconds: config.workflowReconcileSeconds,
        },
      });
      return {
        // Up to Dapr 1.17 the sidecar answers workflow calls only once the app port is open.
        afterPlatformStart: async () => {
          await orchestrator.startWorkflows();
          platform.logger.info("orchestrator consuming orchestrator-events and worker-results");
        },
        stop: () => orchestrator.stop(),
      };
    },
  };
}

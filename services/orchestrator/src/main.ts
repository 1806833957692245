// Entry point: the orchestrator alone, against a shared DATABASE_URL (or the embedded database).
// It also hosts the batch workflows; run one orchestrator process per database in embedded mode
// (the in-process engine does not share instances between processes).
import { bootPlatform, platformConfigFromEnv, runUntilSignalled } from "@matoolkit/platform";
import { orchestratorConfigFromEnv } from "./orchestrator-config.ts";
import { startOrchestratorService } from "./orchestrator-service.ts";

await runUntilSignalled("orchestrator", async () => {
  const config = orchestratorConfigFromEnv(process.env);
  const platform = await bootPlatform(platformConfigFromEnv(process.env), "orchestrator");
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
  // Subscribed: open the app port (Dapr reads the subscriptions once), and only then start the
  // workflows. Up to Dapr 1.17 the sidecar answers workflow calls only once that port is open.
  await platform.start();
  await orchestrator.startWorkflows();
  platform.logger.info("orchestrator consuming orchestrator-events and worker-results");
  return async () => {
    await orchestrator.stop();
    await platform.stop();
  };
});

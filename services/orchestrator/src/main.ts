// Entry point: the orchestrator alone, against a shared DATABASE_URL (or the embedded database).
import { bootPlatform, platformConfigFromEnv, runUntilSignalled } from "@matoolkit/platform";
import { startOrchestratorService } from "./orchestrator-service.ts";

await runUntilSignalled("orchestrator", async () => {
  const platform = await bootPlatform(platformConfigFromEnv(process.env), "orchestrator");
  await startOrchestratorService({ db: platform.db, bus: platform.bus, logger: platform.logger });
  platform.logger.info("orchestrator consuming orchestrator-events and worker-results");
  return () => platform.stop();
});

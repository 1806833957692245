// Entry point: the orchestrator alone, against a shared DATABASE_URL (or the embedded database).
// Its wiring is compose.ts, shared with all-in-one.
import {
  bootOptionsFor,
  bootPlatform,
  platformConfigFromEnv,
  runUntilSignalled,
  startServices,
} from "@matoolkit/platform";
import { orchestratorPart } from "./compose.ts";

await runUntilSignalled("orchestrator", async () => {
  const part = orchestratorPart(process.env);
  const { usesSql, ...boot } = bootOptionsFor([part]);
  const platform = await bootPlatform(platformConfigFromEnv(process.env, { usesSql }), "orchestrator", boot);
  return (await startServices(platform, [part])).stop;
});

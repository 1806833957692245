// Entry point: the scheduler alone, against a shared DATABASE_URL (or the embedded database).
// Its wiring is compose.ts, shared with all-in-one.
import {
  bootOptionsFor,
  dataSourcesFromEnv,
  bootPlatform,
  platformConfigFromEnv,
  runUntilSignalled,
  startServices,
} from "@matoolkit/platform";
import { schedulerPart } from "./compose.ts";

await runUntilSignalled("scheduler", async () => {
  const part = schedulerPart(process.env, {
    dataSources: dataSourcesFromEnv(process.env, platformConfigFromEnv(process.env).dataDir),
  });
  const { usesSql, ...boot } = bootOptionsFor([part]);
  const platform = await bootPlatform(platformConfigFromEnv(process.env, { usesSql }), "scheduler", boot);
  return (await startServices(platform, [part])).stop;
});

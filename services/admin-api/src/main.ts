// Entry point: the admin API alone, against a shared DATABASE_URL (or the embedded database).
// Its wiring is compose.ts, shared with all-in-one.
import {
  bootOptionsFor,
  bootPlatform,
  dataSourcesFromEnv,
  platformConfigFromEnv,
  runUntilSignalled,
  startServices,
} from "@matoolkit/platform";
import { adminApiPart } from "./compose.ts";

await runUntilSignalled("admin-api", async () => {
  const part = adminApiPart(process.env, {
    dataSources: dataSourcesFromEnv(process.env, platformConfigFromEnv(process.env).dataDir),
  });
  const { usesSql, ...boot } = bootOptionsFor([part]);
  const platform = await bootPlatform(platformConfigFromEnv(process.env, { usesSql }), "admin-api", boot);
  return (await startServices(platform, [part])).stop;
});

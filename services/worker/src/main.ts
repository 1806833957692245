// Entry point: one worker pool (WorkerId) alone. It needs the bus and the idempotency store, no
// SQL tables: on Dapr (MATOOLKIT_RUNTIME=dapr or aca) it opens no database at all and needs no
// DATABASE_URL; embedded, both ports live in PostgreSQL. Its wiring is compose.ts, shared with all-in-one.
import {
  bootOptionsFor,
  bootRuntimePlatform,
  platformConfigFromEnv,
  runUntilSignalled,
  startServices,
} from "@matoolkit/platform";
import { workerConfigFromEnv } from "./worker-config.ts";
import { workerPart } from "./compose.ts";

await runUntilSignalled("worker", async ({ requestShutdown }) => {
  // Configuration first: a bad variable fails before any database or tenant is touched.
  const part = workerPart(process.env, { onIdle: requestShutdown });
  const { usesSql, ...boot } = bootOptionsFor([part]);
  const platform = await bootRuntimePlatform(
    platformConfigFromEnv(process.env, { usesSql }),
    `worker-${workerConfigFromEnv(process.env).workerId}`,
    boot,
  );
  return (await startServices(platform, [part])).stop;
});

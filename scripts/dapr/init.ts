/**
 * `npm run dapr:init`: what `dapr init --slim` does, from the binaries `npm run dapr:install`
 * built (that command downloads from GitHub, which this machine cannot reach): the newest pinned
 * daprd, placement and scheduler and the dapr CLI into ~/.dapr/bin (DAPR_RUNTIME_PATH/.dapr/bin),
 * then placement (localhost:50005) and scheduler (localhost:50006) started in the background.
 * `npm run dapr:init -- --stop` stops them. Then: export PATH="$HOME/.dapr/bin:$PATH"; dapr run -f .
 */
import { parseArgs } from "node:util";
import {
  daprCacheRoot,
  installSlimRuntime,
  requireRuntimeBinaries,
  slimRuntimeLayout,
  startSlimControlPlane,
  stopSlimControlPlane,
} from "@matoolkit/dapr-harness";

const { values } = parseArgs({ options: { stop: { type: "boolean" }, version: { type: "string" } } });
const layout = slimRuntimeLayout(process.env);
try {
  if (values.stop === true) {
    for (const line of await stopSlimControlPlane(layout)) console.log(`dapr:init: ${line}`);
  } else {
    const binaries = requireRuntimeBinaries(values.version ?? "newest", process.env);
    // Binaries may not be replaced under a running daemon.
    if (installSlimRuntime({ layout, binaries, cacheRoot: daprCacheRoot(process.env) }).replaced) {
      await stopSlimControlPlane(layout);
    }
    console.log(`dapr:init: Dapr ${binaries.version} runtime and the dapr CLI in ${layout.binDir}`);
    for (const line of await startSlimControlPlane(layout)) console.log(`dapr:init: ${line}`);
    console.log(`dapr:init: now: export PATH="${layout.binDir}:$PATH" && dapr run -f .`);
  }
} catch (error) {
  console.error(`dapr:init: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}

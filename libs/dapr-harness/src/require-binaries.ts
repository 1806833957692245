import { existsSync } from "node:fs";
import { daprCacheRoot, runtimeBinaries, type DaprRuntimeBinaries } from "./dapr-cache.ts";
import { daprRuntimePin } from "./dapr-pins.ts";

/**
 * The built binaries of a pinned runtime, or an error saying how to build them: a suite on real
 * Dapr never falls back to a stand-in.
 */
export function requireRuntimeBinaries(
  version: string,
  env: Readonly<Record<string, string | undefined>>,
): DaprRuntimeBinaries {
  const pin = daprRuntimePin(version);
  const binaries = runtimeBinaries(daprCacheRoot(env), pin);
  const missing = [binaries.daprd, binaries.placement, binaries.scheduler].filter(
    (path) => !existsSync(path),
  );
  if (missing.length > 0) {
    throw new Error(
      `Dapr ${pin.version} is not built (missing ${missing.join(", ")}): run npm run dapr:install -- --version ${pin.version}`,
    );
  }
  return binaries;
}

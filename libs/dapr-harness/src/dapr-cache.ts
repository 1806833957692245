import { homedir } from "node:os";
import { join } from "node:path";
import type { DaprRuntimePin, GoBuildRecipe } from "./dapr-pins.ts";
import { daprCliRecipe } from "./dapr-pins.ts";

/**
 * Where built Dapr binaries live: outside the work tree, so every clone on a machine (a CI run's
 * fresh clone included) finds what an earlier build left, and nothing is ever committed.
 * `MATOOLKIT_DAPR_CACHE` overrides; else `$XDG_CACHE_HOME/matoolkit/dapr`, else `~/.cache/…`.
 * The environment is passed in (libraries do not read process.env).
 */
export function daprCacheRoot(env: Readonly<Record<string, string | undefined>>): string {
  const explicit = env.MATOOLKIT_DAPR_CACHE?.trim();
  if (explicit !== undefined && explicit !== "") return explicit;
  const xdg = env.XDG_CACHE_HOME?.trim();
  return join(xdg !== undefined && xdg !== "" ? xdg : join(homedir(), ".cache"), "matoolkit", "dapr");
}

/** The folder of one recipe's binaries. */
export function recipeDir(cacheRoot: string, recipe: GoBuildRecipe): string {
  return join(cacheRoot, recipe.name);
}

export interface DaprRuntimeBinaries {
  readonly version: string;
  readonly daprd: string;
  readonly placement: string;
  readonly scheduler: string;
}

export function runtimeBinaries(cacheRoot: string, pin: DaprRuntimePin): DaprRuntimeBinaries {
  const dir = recipeDir(cacheRoot, pin.recipe);
  return {
    version: pin.version,
    daprd: join(dir, "daprd"),
    placement: join(dir, "placement"),
    scheduler: join(dir, "scheduler"),
  };
}

export function daprCliBinary(cacheRoot: string): string {
  return join(recipeDir(cacheRoot, daprCliRecipe), "dapr");
}

import { buildGoRecipe } from "./build-go-recipe.ts";
import { daprCacheRoot } from "./dapr-cache.ts";
import { daprCliRecipe, daprRuntimePin, pinnedDaprRuntimes, type GoBuildRecipe } from "./dapr-pins.ts";
import { goawsRecipe } from "./goaws.ts";

export interface InstallDaprOptions {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Runtime versions to build (`1.18.1`, `newest`, `oldest`); default every pinned one. */
  readonly versions?: readonly string[];
  /** Also build the dapr CLI (default true). */
  readonly cli?: boolean;
  /** Also build goaws, the SNS + SQS emulator the AWS component tests run against (default true). */
  readonly emulators?: boolean;
  readonly log: (line: string) => void;
}

/**
 * Builds the pinned Dapr runtimes, the CLI and goaws into the cache (see dapr-pins.ts, goaws.ts);
 * seconds when already built.
 */
export async function installDapr(options: InstallDaprOptions): Promise<{ cacheRoot: string }> {
  const cacheRoot = daprCacheRoot(options.env);
  const recipes: GoBuildRecipe[] = (
    options.versions === undefined ? pinnedDaprRuntimes : options.versions.map(daprRuntimePin)
  ).map((pin) => pin.recipe);
  if (options.cli ?? true) recipes.push(daprCliRecipe);
  if (options.emulators ?? true) recipes.push(goawsRecipe);
  for (const recipe of recipes) {
    const outcome = await buildGoRecipe({ cacheRoot, recipe, env: options.env, log: options.log });
    options.log(
      `${recipe.name}: ${outcome.built ? `built in ${outcome.seconds.toFixed(0)} s` : "already built"} (${outcome.dir})`,
    );
  }
  return { cacheRoot };
}

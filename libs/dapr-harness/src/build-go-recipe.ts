import { execFile } from "node:child_process";
import {
  cpSync,
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  appendFileSync,
  writeFileSync,
  readdirSync,
  statSync,
} from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import type { GoBuildRecipe } from "./dapr-pins.ts";
import { recipeDir } from "./dapr-cache.ts";

const run = promisify(execFile);

/** Written beside the binaries once they are all built: the recipe they were built from. */
const STAMP = "recipe.json";

export interface BuildOutcome {
  readonly dir: string;
  readonly built: boolean;
  readonly seconds: number;
}

/**
 * Builds a recipe's binaries into the cache unless the same recipe already did (then it returns
 * in milliseconds). The release's module is downloaded through the Go module proxy and built in a
 * writable copy, because dapr/dapr's go.mod has `replace` directives, which `go install M@V`
 * refuses; each replacement of ours is written into that copy's go.mod with its checksums.
 */
export async function buildGoRecipe(options: {
  readonly cacheRoot: string;
  readonly recipe: GoBuildRecipe;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly log: (line: string) => void;
}): Promise<BuildOutcome> {
  const { recipe, cacheRoot, log } = options;
  const started = Date.now();
  const dir = recipeDir(cacheRoot, recipe);
  const stamp = JSON.stringify(recipe, null, 2);
  if (isBuilt(dir, recipe, stamp)) return { dir, built: false, seconds: (Date.now() - started) / 1000 };

  const go = await findGo(options.env);
  const env = { ...options.env, CGO_ENABLED: "0", GOFLAGS: "-mod=mod" } as NodeJS.ProcessEnv;
  log(`downloading ${recipe.module}@${recipe.version}`);
  const source = await moduleDir(go, `${recipe.module}@${recipe.version}`, env);

  const work = join(cacheRoot, ".build", recipe.name);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(join(cacheRoot, ".build"), { recursive: true });
  cpSync(source, work, { recursive: true });
  makeWritable(work);
  for (const replacement of recipe.replacements) {
    log(`  ${replacement.module} at ${replacement.version}: ${replacement.why}`);
    await run(
      go,
      ["mod", "edit", `-replace=${replacement.module}=${replacement.module}@${replacement.version}`],
      {
        cwd: work,
        env,
      },
    );
    if (replacement.checksumsFrom === undefined) continue;
    const sums = readFileSync(join(await moduleDir(go, replacement.checksumsFrom, env), "go.sum"), "utf8")
      .split("\n")
      .filter(
        (line) =>
          line.startsWith(`${replacement.module} ${replacement.version} `) ||
          line.startsWith(`${replacement.module} ${replacement.version}/go.mod `),
      );
    if (sums.length === 0) {
      throw new Error(
        `${replacement.checksumsFrom}'s go.sum has no checksum of ${replacement.module}@${replacement.version}`,
      );
    }
    appendFileSync(join(work, "go.sum"), `${sums.join("\n")}\n`);
  }

  const staging = `${dir}.partial`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  for (const { package: pkg, binary } of recipe.binaries) {
    log(
      `building ${binary} (${recipe.module} ${recipe.version}${recipe.tags.length > 0 ? `, tags ${recipe.tags.join(",")}` : ""})`,
    );
    const args = ["build", "-trimpath", `-ldflags=${recipe.ldflags.join(" ")}`, "-o", join(staging, binary)];
    if (recipe.tags.length > 0) args.push(`-tags=${recipe.tags.join(",")}`);
    await run(go, [...args, pkg], { cwd: work, env, maxBuffer: 64 * 1024 * 1024 }).catch((error: unknown) => {
      const stderr = (error as { stderr?: string }).stderr ?? "";
      throw new Error(`go build of ${binary} failed (in ${work}):\n${stderr.slice(-4000)}`);
    });
  }
  writeFileSync(join(staging, STAMP), stamp);
  // Swap in whole: a reader never sees a half-built folder, and an interrupted build is redone.
  rmSync(dir, { recursive: true, force: true });
  renameSync(staging, dir);
  rmSync(work, { recursive: true, force: true });
  return { dir, built: true, seconds: (Date.now() - started) / 1000 };
}

function isBuilt(dir: string, recipe: GoBuildRecipe, stamp: string): boolean {
  try {
    return (
      readFileSync(join(dir, STAMP), "utf8") === stamp &&
      recipe.binaries.every(({ binary }) => statSync(join(dir, binary)).isFile())
    );
  } catch {
    return false;
  }
}

async function findGo(env: Readonly<Record<string, string | undefined>>): Promise<string> {
  const candidates = [env.GO_BINARY, "go", "/usr/local/go/bin/go"].filter(
    (c): c is string => c !== undefined && c !== "",
  );
  for (const candidate of candidates) {
    try {
      await run(candidate, ["version"], { env: env as NodeJS.ProcessEnv });
      return candidate;
    } catch {
      // next candidate
    }
  }
  throw new Error(
    "Go is needed to build Dapr from its sources and was not found (tried go on PATH and /usr/local/go/bin/go): install Go 1.26 or newer, or set GO_BINARY",
  );
}

/** Downloads a module version through the module proxy (verified by go.sum) and gives its folder. */
async function moduleDir(go: string, moduleAtVersion: string, env: NodeJS.ProcessEnv): Promise<string> {
  const { stdout } = await run(go, ["mod", "download", "-json", moduleAtVersion], {
    env,
    maxBuffer: 16 * 1024 * 1024,
  }).catch((error: unknown) => ({ stdout: (error as { stdout?: string }).stdout ?? "" }));
  const info = JSON.parse(stdout || "{}") as { Dir?: string; Error?: string };
  if (info.Dir === undefined || !existsSync(info.Dir)) {
    throw new Error(`cannot download ${moduleAtVersion}: ${info.Error ?? "go mod download gave no folder"}`);
  }
  return info.Dir;
}

/** The module cache is read-only; the build copy gets write bits back (go mod edit writes go.mod). */
function makeWritable(dir: string): void {
  chmodSync(dir, 0o755);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) makeWritable(path);
    else chmodSync(path, 0o644);
  }
}

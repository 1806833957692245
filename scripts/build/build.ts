// `npm run build`: bundles every service into one file, dist/matoolkit.mjs, so the image runs
// plain JavaScript (`node dist/matoolkit.mjs <command>`, no tsx). The workspace libraries are
// bundled in; npm packages stay external and come from `npm ci --omit=dev` next to the bundle.
// Usage: tsx scripts/build/build.ts [--outdir <dir>]  (the directory must sit inside the repo, or
// anywhere with this repo's node_modules above it, since the externals resolve from there).
import { copyFileSync, existsSync, readdirSync, readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, extname, join, relative, resolve, sep } from "node:path";
import { parseArgs } from "node:util";
import { build, type Metafile, type Plugin } from "esbuild";

export const repoRoot = resolve(import.meta.dirname, "../..");
export const entryPoint = join(repoRoot, "scripts/build/matoolkit-entry.ts");
export const bundleName = "matoolkit.mjs";
/** The image's HEALTHCHECK script, plain JavaScript, shipped next to the bundle. */
export const healthcheckName = "healthcheck.mjs";

export interface BuildResult {
  readonly outfile: string;
  readonly bytes: number;
  /** npm packages the bundle imports (resolved at run time from node_modules). */
  readonly externals: readonly string[];
  /** Every file the bundle was made from (its metafile's inputs), relative to the repository. */
  readonly inputs: readonly string[];
}

export async function buildBundle(outdir = join(repoRoot, "dist")): Promise<BuildResult> {
  const outfile = join(resolve(outdir), bundleName);
  const result = await build({
    entryPoints: [entryPoint],
    outfile,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    sourcemap: true,
    // The map serves stack traces (NODE_OPTIONS=--enable-source-maps); the sources stay out of it.
    sourcesContent: false,
    // Error classes and logs name constructors; keep those names through the bundler's renaming.
    keepNames: true,
    packages: "external",
    plugins: [workspacePackages(), sourceRelativeImportMeta(dirname(outfile))],
    metafile: true,
    logLevel: "warning",
  });
  const externals = externalPackages(result.metafile, readFileSync(outfile, "utf8"));
  assertProductionDependencies(externals);
  copyFileSync(join(import.meta.dirname, healthcheckName), join(dirname(outfile), healthcheckName));
  const output = result.metafile.outputs[relative(process.cwd(), outfile).split(sep).join("/")];
  return {
    outfile,
    bytes: output?.bytes ?? 0,
    externals,
    inputs: Object.keys(result.metafile.inputs)
      .map((input) => relative(repoRoot, resolve(input)).split(sep).join("/"))
      .sort(),
  };
}

/**
 * `packages: "external"` would leave `@matoolkit/*` external too, but the image has no workspace
 * sources to load them from: resolve them to their TypeScript through each workspace's `exports`
 * (so a subpath such as `@matoolkit/runtime/testing` works, and a missing one fails the build).
 */
function workspacePackages(): Plugin {
  const byName = new Map<string, { dir: string; exports: Record<string, string> }>();
  for (const dir of workspaceDirs()) {
    const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
      name: string;
      exports?: Record<string, string>;
    };
    byName.set(manifest.name, { dir, exports: manifest.exports ?? {} });
  }
  return {
    name: "matoolkit-workspaces",
    setup(esbuild) {
      esbuild.onResolve({ filter: /^@matoolkit\// }, (args) => {
        const [scope, name, ...rest] = args.path.split("/");
        const workspace = byName.get(`${scope}/${name}`);
        const subpath = rest.length === 0 ? "." : `./${rest.join("/")}`;
        const target = workspace?.exports[subpath];
        if (workspace === undefined || target === undefined) {
          return { errors: [{ text: `${args.path} is not exported by a workspace package` }] };
        }
        return { path: join(workspace.dir, target) };
      });
    },
  };
}

/** The workspace folders named by the root package.json (`libs/*`, `services/*`). */
export function workspaceDirs(): string[] {
  const { workspaces } = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as {
    workspaces: string[];
  };
  return workspaces.flatMap((pattern) => {
    if (!pattern.endsWith("/*")) return [join(repoRoot, pattern)];
    const parent = join(repoRoot, pattern.slice(0, -2));
    return readdirSync(parent)
      .map((name) => join(parent, name))
      .filter((dir) => existsSync(join(dir, "package.json")));
  });
}

/**
 * In a bundle `import.meta.url` is the bundle's own URL, not the source file's. Rewrite it (and
 * `dirname`, `filename`) to the source file's place relative to the bundle, so code that finds
 * files next to its source (the dashboard's built assets, `createRequire(import.meta.url)`) finds
 * them where the repository layout (and the image, which keeps it under /app) puts them.
 */
function sourceRelativeImportMeta(bundleDir: string): Plugin {
  return {
    name: "matoolkit-source-relative-import-meta",
    setup(esbuild) {
      esbuild.onLoad({ filter: /\.tsx?$/ }, (args) => {
        if (!args.path.startsWith(repoRoot + sep) || args.path.includes(`${sep}node_modules${sep}`)) {
          return undefined;
        }
        const source = readFileSync(args.path, "utf8");
        const loader = extname(args.path) === ".tsx" ? "tsx" : "ts";
        if (!/\bimport\.meta\.(url|dirname|filename)\b/.test(source)) return { contents: source, loader };
        const fromBundle = (path: string) => relative(bundleDir, path).split(sep).join("/");
        const file = JSON.stringify(fromBundle(args.path));
        const dir = JSON.stringify(fromBundle(dirname(args.path)) || ".");
        const contents =
          source
            .replace(/\bimport\.meta\.url\b/g, `new URL(${file}, import.meta.url).href`)
            .replace(/\bimport\.meta\.dirname\b/g, `__matoolkitJoin(import.meta.dirname, ${dir})`)
            .replace(/\bimport\.meta\.filename\b/g, `__matoolkitJoin(import.meta.dirname, ${file})`) +
          // Appended, not prepended, so the source map's line numbers stay right (imports hoist).
          `\nimport { join as __matoolkitJoin } from "node:path";\n`;
        return { contents, loader };
      });
    },
  };
}

/**
 * Bare package names the bundle imports, without Node built-ins: its imports, plus the literal
 * `require("…")` calls of `createRequire` (CommonJS read on purpose), which the bundler leaves as is.
 */
function externalPackages(metafile: Metafile, bundle: string): string[] {
  const paths = Object.values(metafile.outputs).flatMap((output) =>
    output.imports.filter((imported) => imported.external).map((imported) => imported.path),
  );
  for (const [, path] of bundle.matchAll(/\brequire\d*\(\s*"([^".][^"]*)"\s*\)/g)) paths.push(path ?? "");
  const names = new Set<string>();
  for (const path of paths) {
    if (path === "" || path.startsWith("node:") || builtinModules.includes(path)) continue;
    const parts = path.split("/");
    names.add(path.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] ?? path));
  }
  return [...names].sort();
}

/**
 * Each external must be in what `npm ci --omit=dev --omit=optional` installs at the top of
 * node_modules (the bundle resolves from there), or the image would fail at start-up with
 * "Cannot find package": caught here instead. tsx in particular must never be imported at run time.
 */
function assertProductionDependencies(externals: readonly string[]): void {
  const lock = JSON.parse(readFileSync(join(repoRoot, "package-lock.json"), "utf8")) as {
    packages: Record<string, { dev?: boolean; optional?: boolean; devOptional?: boolean }>;
  };
  const problems = externals.flatMap((name) => {
    if (name === "tsx") return ["tsx (the bundle must run on plain node)"];
    const entry = lock.packages[`node_modules/${name}`];
    if (entry === undefined) return [`${name} (not installed at the top of node_modules)`];
    if (entry.dev || entry.optional || entry.devOptional) return [`${name} (not a production dependency)`];
    return [];
  });
  if (problems.length > 0) {
    throw new Error(`the bundle imports packages the production image lacks: ${problems.join(", ")}`);
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === import.meta.filename) {
  const { values } = parseArgs({ options: { outdir: { type: "string" } } });
  const result = await buildBundle(values.outdir);
  process.stdout.write(
    `built ${relative(process.cwd(), result.outfile)} (${Math.round(result.bytes / 1024)} KiB, ` +
      `${result.externals.length} external packages)\n`,
  );
}

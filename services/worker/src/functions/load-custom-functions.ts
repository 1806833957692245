import { readdir, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { createFunctionRegistry, type FunctionRegistry } from "./function-registry.ts";
import type { FunctionModule, WorkerFunction } from "./worker-function.ts";

/**
 * 000: "Custom functions are discovered from the CustomFunctions/ directory (volume mount or
 * baked into image)". Every `.js`, `.mjs` and `.ts` file directly in the directory is a module of
 * functions with the WorkerFunction contract, exported either by name or as a default object:
 *
 * ```ts
 * export default { "Get-MigrationWave": async (params, context) => ({ complete: true, data }) };
 * // or: export { getMigrationWave as "Get-MigrationWave" };
 * ```
 *
 * Loading is all or nothing, at start-up: a module that does not import, an export that is not
 * a function under a Verb-Noun name, a module with nothing usable, or a name already taken (by
 * another file or by a standard function) stops the worker with an error naming the file.
 * `.ts` files need TypeScript support: tsx under `npm start`, Node 24's own type stripping in the image.
 */
export interface CustomFunctionsLoaded {
  /** Every custom function, by its declared name. */
  readonly module: FunctionModule;
  /** The files loaded, in load order, as `<dir>/<file>` with dir as configured. */
  readonly files: readonly string[];
  /** Which file declared each function (keys as declared). */
  readonly sources: ReadonlyMap<string, string>;
}

/** Verb-Noun, as PowerShell names its commands: `Get-MigrationWave`, `Set-ExchangeMailUserGuids`. */
export const cmdletName = /^[A-Za-z]+-[A-Za-z][A-Za-z0-9]*$/u;

const loadable = /\.(?:m?js|ts)$/u;
const ignored = /(?:\.test\.|\.spec\.|\.d\.ts$)/u;

export class CustomFunctionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CustomFunctionError";
  }
}

export async function loadCustomFunctions(dir: string): Promise<CustomFunctionsLoaded> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names: string[] = [];
  for (const entry of entries) {
    if (entry.name.startsWith(".") || !loadable.test(entry.name) || ignored.test(entry.name)) continue;
    // Kubernetes ConfigMap volumes present files as symlinks into `..data/`: follow them.
    const isFile = entry.isFile() || (entry.isSymbolicLink() && (await stat(join(dir, entry.name))).isFile());
    if (isFile) names.push(entry.name);
  }
  // Code point order, not locale order: the same files load in the same order everywhere.
  names.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

  const module: Record<string, WorkerFunction> = {};
  const sources = new Map<string, string>();
  const byKey = new Map<string, { name: string; file: string }>();
  const files: string[] = [];
  for (const name of names) {
    const file = join(dir, name);
    const functions = await importFunctions(file, resolve(dir, name));
    for (const [functionName, fn] of functions) {
      const key = functionName.toLowerCase();
      const existing = byKey.get(key);
      if (existing !== undefined) {
        throw new CustomFunctionError(
          `${file}: custom function "${functionName}" is already declared by ${existing.file} (as "${existing.name}")`,
        );
      }
      byKey.set(key, { name: functionName, file });
      module[functionName] = fn;
      sources.set(functionName, file);
    }
    files.push(file);
  }
  return { module, files, sources };
}

async function importFunctions(file: string, absolute: string): Promise<Array<[string, WorkerFunction]>> {
  let namespace: Record<string, unknown>;
  try {
    namespace = (await import(pathToFileURL(absolute).href)) as Record<string, unknown>;
  } catch (error) {
    const why = error instanceof Error ? `${error.name}: ${error.message.split("\n")[0]}` : String(error);
    throw new CustomFunctionError(`${file}: cannot be imported (${why})`);
  }

  const exported: Array<[string, unknown, string]> = [];
  for (const [name, value] of Object.entries(namespace)) {
    if (name !== "default") {
      exported.push([name, value, `export "${name}"`]);
      continue;
    }
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      throw new CustomFunctionError(
        `${file}: the default export must be an object of functions keyed by Verb-Noun names, not ${describe(value)}`,
      );
    }
    for (const [key, fn] of Object.entries(value)) exported.push([key, fn, `default export key "${key}"`]);
  }

  const problems: string[] = [];
  const functions: Array<[string, WorkerFunction]> = [];
  const seen = new Set<string>();
  for (const [name, value, where] of exported) {
    if (!cmdletName.test(name)) {
      problems.push(`${where} is not a Verb-Noun function name (such as Get-MigrationWave)`);
    } else if (typeof value !== "function") {
      problems.push(`${where} is ${describe(value)}, not a function`);
    } else if (seen.has(name.toLowerCase())) {
      problems.push(`"${name}" is exported twice`);
    } else {
      seen.add(name.toLowerCase());
      functions.push([name, value as WorkerFunction]);
    }
  }
  if (problems.length > 0) throw new CustomFunctionError(`${file}: ${problems.join("; ")}`);
  if (functions.length === 0) {
    throw new CustomFunctionError(
      `${file}: exports no function (export them by Verb-Noun name, or as a default object of them)`,
    );
  }
  return functions;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}

/**
 * The worker's registry: built-in modules (diagnostics, the standard library) plus the custom
 * functions. A custom function may not shadow a built-in one: the error names its file.
 */
export function createRegistryWithCustomFunctions(
  builtIn: readonly FunctionModule[],
  custom: CustomFunctionsLoaded | undefined,
): FunctionRegistry {
  if (custom !== undefined) {
    const taken = new Map<string, string>();
    for (const module of builtIn) for (const name of Object.keys(module)) taken.set(name.toLowerCase(), name);
    for (const [name, file] of custom.sources) {
      const standard = taken.get(name.toLowerCase());
      if (standard !== undefined) {
        throw new CustomFunctionError(
          `${file}: custom function "${name}" has the name of the built-in function "${standard}"; rename it`,
        );
      }
    }
  }
  return createFunctionRegistry(...builtIn, ...(custom === undefined ? [] : [custom.module]));
}

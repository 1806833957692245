import type { FunctionModule, WorkerFunction } from "./worker-function.ts";

export interface FunctionRegistry {
  /** The function for a job's FunctionName, or undefined when no module provides it. */
  resolve(name: string): WorkerFunction | undefined;
  /** Registered names, sorted, in their declared casing (safe to show: they are not PII). */
  names(): readonly string[];
  /** Whether the function declares itself safe to run again after a cut-off run (false when unknown). */
  isSafeToRepeat(name: string): boolean;
}

/**
 * Merges function modules into one lookup. Names are matched case-insensitively because the
 * runbooks were written for the PowerShell worker, where `new-entrauser` and `New-EntraUser` are
 * the same command. Two modules declaring the same name is a packaging mistake, so it fails at
 * start-up instead of letting one silently shadow the other.
 */
export function createFunctionRegistry(...modules: readonly FunctionModule[]): FunctionRegistry {
  const byKey = new Map<string, { readonly name: string; readonly fn: WorkerFunction }>();
  for (const module of modules) {
    for (const [name, fn] of Object.entries(module)) {
      const key = name.toLowerCase();
      const existing = byKey.get(key);
      if (existing !== undefined) {
        throw new Error(`Worker function "${name}" is registered twice (also as "${existing.name}")`);
      }
      byKey.set(key, { name, fn });
    }
  }
  const names = [...byKey.values()].map((entry) => entry.name).sort((a, b) => a.localeCompare(b));
  return {
    resolve: (name) => byKey.get(name.toLowerCase())?.fn,
    names: () => names,
    isSafeToRepeat: (name) => byKey.get(name.toLowerCase())?.fn.safeToRepeat === true,
  };
}

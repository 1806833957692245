import { readFile } from "node:fs/promises";
import path from "node:path";
import { usageError } from "../errors.ts";

/** A file named on the command line (runbook YAML, member CSV); relative to the cwd. */
export async function readInputFile(cwd: string, file: string, what: string): Promise<string> {
  const resolved = path.resolve(cwd, file);
  try {
    return await readFile(resolved, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "unreadable";
    throw usageError("input.unreadable", `cannot read the ${what} ${resolved} (${code})`);
  }
}

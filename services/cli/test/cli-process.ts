import { spawn } from "node:child_process";
import path from "node:path";

export const repoRoot = path.resolve(import.meta.dirname, "../../..");
const bin = path.join(repoRoot, "services/cli/bin/matoolkit.mjs");

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunningCli {
  readonly done: Promise<CliResult>;
  /** What the process printed so far. */
  stdout(): string;
}

/**
 * Starts the real CLI (`node services/cli/bin/matoolkit.mjs …`) as a child process, from the
 * repository root, with only the given environment: nothing from the developer's own MATOOLKIT_*
 * variables or ~/.matoolkit leaks into a test (tests pass PATH and HOME themselves).
 */
export function startCli(args: readonly string[], env: Readonly<Record<string, string>>): RunningCli {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: repoRoot,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
  return { done, stdout: () => stdout };
}

export function runCliProcess(
  args: readonly string[],
  env: Readonly<Record<string, string>>,
): Promise<CliResult> {
  return startCli(args, env).done;
}

/**
 * The same CLI in this process (runCli is all main.ts runs, with the process's streams): for
 * polling loops, where a child process per poll would only add half a second each.
 */
export async function runCliInProcess(
  args: readonly string[],
  env: Readonly<Record<string, string>>,
): Promise<CliResult> {
  const { runCli } = await import("../src/run.ts");
  let stdout = "";
  let stderr = "";
  const code = await runCli(args, {
    env,
    cwd: repoRoot,
    home: env.HOME ?? repoRoot,
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    fetch: globalThis.fetch,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    now: () => new Date(),
  });
  return { code, stdout, stderr };
}

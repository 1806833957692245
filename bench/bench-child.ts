// Runs bench/orchestrator-throughput.ts in a process of its own and reads the figures it writes to
// BENCH_RESULT_FILE (bench/dapr-vs-embedded.ts and bench/telemetry-cost.ts compare such runs).
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";

export type ChildOutcome<T> =
  { readonly ok: true; readonly result: T } | { readonly ok: false; readonly why: string };

let interrupted = false;

/** True once SIGINT or SIGTERM reached this process during a run (the comparison then stops). */
export function benchInterrupted(): boolean {
  return interrupted;
}

export interface BenchChildOptions {
  /** The variable naming the result file for the child (default BENCH_RESULT_FILE). */
  readonly resultVariable?: string;
  /** False: the child's standard output is dropped (its figures come back through the file). */
  readonly showOutput?: boolean;
}

/**
 * One run of `benchFile` with `env` (the result variable set to `resultFile`); its standard error,
 * and unless told otherwise its output, go to ours.
 */
export async function runBenchChild<T>(
  benchFile: string,
  env: Readonly<Record<string, string | undefined>>,
  resultFile: string,
  options: BenchChildOptions = {},
): Promise<ChildOutcome<T>> {
  // The same node and loader (tsx's --import) as this process, so the child runs the .ts file.
  const child = spawn(process.execPath, [...process.execArgv, benchFile], {
    env: { ...env, [options.resultVariable ?? "BENCH_RESULT_FILE"]: resultFile },
    stdio: ["ignore", options.showOutput === false ? "ignore" : "inherit", "inherit"],
  });
  // A signal to this process goes on to the run (which stops what it started), then ends us.
  const forward = (signal: NodeJS.Signals) => {
    interrupted = true;
    child.kill(signal);
  };
  process.on("SIGINT", forward);
  process.on("SIGTERM", forward);
  const code = await new Promise<number | string>((resolve) =>
    child.once("exit", (exitCode, signal) => resolve(exitCode ?? signal ?? "unknown")),
  );
  process.off("SIGINT", forward);
  process.off("SIGTERM", forward);
  if (code !== 0) return { ok: false, why: `failed (exit ${code})` };
  try {
    return { ok: true, result: JSON.parse(readFileSync(resultFile, "utf8")) as T };
  } catch (error) {
    return { ok: false, why: `no result (${String(error)})` };
  }
}

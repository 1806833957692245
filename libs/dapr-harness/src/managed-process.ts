import { spawn } from "node:child_process";
import { createWriteStream, readFileSync } from "node:fs";

/**
 * A real daemon (daprd, placement, scheduler, redis-server) started by the harness: its output goes
 * to a log file (read back into errors when it fails to start), and it is stopped, or killed
 * with SIGKILL as a drill would, on demand.
 */
export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  /** Resolves with the exit code (or the signal's name) once the process has exited. */
  readonly exited: Promise<number | string>;
  hasExited(): boolean;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
  /** SIGKILL now (a crash); resolves once it has exited. */
  kill(): Promise<void>;
  /** The last lines of its log, for an error message. */
  tail(lines?: number): string;
}

export function startManagedProcess(options: {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly cwd?: string;
  readonly logFile: string;
}): ManagedProcess {
  const log = createWriteStream(options.logFile, { flags: "a" });
  const child = spawn(options.command, options.args, {
    cwd: options.cwd,
    env: (options.env ?? {}) as NodeJS.ProcessEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout.pipe(log, { end: false });
  child.stderr.pipe(log, { end: false });
  let exitedFlag = false;
  const exited = new Promise<number | string>((resolve) => {
    child.once("error", (error) => {
      exitedFlag = true;
      log.write(`\n[harness] could not start ${options.command}: ${error.message}\n`);
      resolve(`error: ${error.message}`);
    });
    child.once("exit", (code, signal) => {
      exitedFlag = true;
      resolve(code ?? signal ?? "unknown");
    });
  });
  void exited.then(() => log.end());
  const tail = (lines = 30) => {
    try {
      return readFileSync(options.logFile, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
    } catch {
      return "(no log)";
    }
  };
  return {
    name: options.name,
    pid: child.pid ?? -1,
    logFile: options.logFile,
    exited,
    hasExited: () => exitedFlag,
    async stop(graceMs = 10_000) {
      if (exitedFlag) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
    },
    async kill() {
      if (exitedFlag) return;
      child.kill("SIGKILL");
      await exited;
    },
    tail,
  };
}

/**
 * Polls `probe` until it resolves true; fails with the process's last log lines if the process
 * exits first or `timeoutMs` passes.
 */
export async function waitUntilReady(
  process: ManagedProcess,
  probe: () => Promise<boolean>,
  options: { readonly timeoutMs: number; readonly what: string },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    if (process.hasExited()) {
      throw new Error(
        `${process.name} exited before ${options.what} (log ${process.logFile}):\n${process.tail()}`,
      );
    }
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) {
      throw new Error(
        `${process.name} was not ${options.what} after ${options.timeoutMs} ms (log ${process.logFile}):\n${process.tail()}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** True when GET `url` answers with a status in 200–299. */
export async function httpAnswers(url: string, headers: Record<string, string> = {}): Promise<boolean> {
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(2_000) });
  await response.body?.cancel();
  return response.ok;
}

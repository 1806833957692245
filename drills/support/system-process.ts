// The drills' system runner: the all-in-one as a child process in its own process group. tsx is
// started directly: `npx` inside `npm run drill` intermittently answered "tsx: not found" here.
import { spawn, type ChildProcess } from "node:child_process";
import { openSync, closeSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/**
 * The real system (`npm start`'s entry point) as a child process in a process group of its own,
 * so `kill -9` of the group takes everything it started, embedded PostgreSQL included, as a
 * crash or an OOM kill of the whole container would.
 */
export interface SystemProcess {
  readonly apiUrl: string;
  /** SIGKILL to the whole process group; resolves once the leader is gone. */
  killHard(): Promise<void>;
  /** SIGTERM (orderly shutdown) to the group; SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

export async function startSystem(options: {
  env: Record<string, string>;
  /** PATH, HOME and the like, under `env`. */
  inheritedEnv?: Readonly<Record<string, string | undefined>> | undefined;
  port: number;
  logFile: string;
  readyTimeoutMs?: number;
}): Promise<SystemProcess> {
  const log = openSync(options.logFile, "a");
  const child: ChildProcess = spawn(
    path.join(repoRoot, "node_modules/.bin/tsx"),
    ["services/all-in-one/src/main.ts"],
    {
      cwd: repoRoot,
      env: { ...options.inheritedEnv, ...options.env },
      detached: true,
      stdio: ["ignore", log, log],
    },
  );
  closeSync(log);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const pid = child.pid;
  if (pid === undefined) throw new Error("could not start the system");
  const apiUrl = `http://127.0.0.1:${options.port}`;
  const signalGroup = (signal: NodeJS.Signals): void => {
    try {
      process.kill(-pid, signal);
    } catch {
      // Already gone.
    }
  };

  const deadline = Date.now() + (options.readyTimeoutMs ?? 180_000);
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the system exited at start (see ${options.logFile})`);
    try {
      if ((await fetch(`${apiUrl}/readyz`)).status === 200) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      signalGroup("SIGKILL");
      throw new Error(`the system was not ready in time (see ${options.logFile})`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }

  return {
    apiUrl,
    async killHard() {
      signalGroup("SIGKILL");
      await exited;
      // The group's other members (PostgreSQL) die with it; give the kernel a moment to reap them.
      await new Promise((resolve) => setTimeout(resolve, 500));
    },
    async stop(graceMs = 20_000) {
      signalGroup("SIGTERM");
      const timer = setTimeout(() => signalGroup("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

import { existsSync, readFileSync, rmSync } from "node:fs";
import { platform } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * Before starting a server on `dataDir`: deal with what an earlier run may have left.
 * - A server still running on it (our process was killed; the server stops on its own when its
 *   lifeline closes, which may still be under way): wait for it, then ask it to stop (fast
 *   shutdown: SIGINT), and as a last resort stop it at once (SIGQUIT).
 * - A `postmaster.pid` naming a process that is gone or is not PostgreSQL (the PID was reused):
 *   PostgreSQL itself clears a dead one, but refuses when the PID is alive, so remove it.
 */
export async function clearStaleServer(dataDir: string, log: (line: string) => void): Promise<void> {
  const pidFile = join(dataDir, "postmaster.pid");
  const pid = readPostmasterPid(pidFile);
  if (pid === undefined) return;
  if (!isPostgresProcess(pid)) {
    rmSync(pidFile, { force: true });
    return;
  }
  log(`a PostgreSQL server (PID ${pid}) left by an earlier run is still using ${dataDir}; stopping it`);
  if (await exited(pid, 5_000)) return;
  signal(pid, "SIGINT");
  if (await exited(pid, 30_000)) return;
  signal(pid, "SIGQUIT");
  if (await exited(pid, 10_000)) return;
  throw new Error(`a PostgreSQL server (PID ${pid}) is still running on ${dataDir} and does not stop`);
}

export function readPostmasterPid(pidFile: string): number | undefined {
  if (!existsSync(pidFile)) return undefined;
  const pid = Number.parseInt(readFileSync(pidFile, "utf8").split("\n")[0] ?? "", 10);
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, owned by another user (the server runs as `postgres` when we are root).
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function isPostgresProcess(pid: number): boolean {
  if (!isAlive(pid)) return false;
  if (platform() !== "linux") return true;
  try {
    const command = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0] ?? "";
    return command.endsWith("postgres");
  } catch {
    return false;
  }
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Gone in the meantime: what we wanted.
  }
}

async function exited(pid: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (isAlive(pid)) {
    if (Date.now() >= deadline) return false;
    await sleep(100);
  }
  return true;
}

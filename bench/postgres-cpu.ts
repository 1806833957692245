import { readdirSync, readFileSync } from "node:fs";
import type pg from "pg";
import { procStatFields } from "./proc-stat.ts";
import { cpuSeconds } from "./real-dapr.ts";

/**
 * CPU seconds the PostgreSQL server spent during a measurement, when it runs on this machine:
 * where a step's cost goes is half the question on a 2-core box whose server shares the cores.
 *
 * The server's processes are the postmaster and its children (backends, WAL writer, autovacuum…),
 * read from /proc (proc(5): fields utime, stime; cutime, cstime of the postmaster for children
 * that exited and were waited for, e.g. a backend whose connection closed mid-run). The postmaster's
 * pid is the first line of `postmaster.pid` in the data directory (`SHOW data_directory`:
 * superusers and pg_read_all_settings only), and the bench's own connection is served by one of
 * its children. Undefined where any of that is not so (a remote server, no privilege, not Linux):
 * the bench then prints no server figure rather than a wrong one.
 */
export async function samplePostgresCpu(admin: pg.Client): Promise<{ stop(): number } | undefined> {
  const postmaster = await postmasterPid(admin);
  if (postmaster === undefined) return undefined;
  const before = serverCpuSeconds(postmaster);
  if (!Number.isFinite(before)) return undefined;
  return { stop: () => serverCpuSeconds(postmaster) - before };
}

async function postmasterPid(admin: pg.Client): Promise<number | undefined> {
  try {
    const { rows } = await admin.query<{ data_directory: string }>("SHOW data_directory");
    const dataDirectory = rows[0]?.data_directory;
    if (dataDirectory === undefined) return undefined;
    const pid = Number(readFileSync(`${dataDirectory}/postmaster.pid`, "utf8").split("\n")[0]);
    if (!Number.isInteger(pid) || pid <= 0) return undefined;
    // That file could be another server's (a local one with the same data directory while the
    // bench measures a remote one): the admin connection's backend must be its child.
    const backend = await admin.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
    return parentPid(backend.rows[0]?.pid ?? 0) === pid ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** The postmaster's own CPU, its exited children's, and every live child's. */
function serverCpuSeconds(postmaster: number): number {
  let total = cpuSeconds(postmaster) + exitedChildrenSeconds(postmaster);
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/u.test(entry) || parentPid(Number(entry)) !== postmaster) continue;
    // NaN when it exited since the listing: its time is in the postmaster's cutime now.
    const seconds = cpuSeconds(Number(entry));
    if (Number.isFinite(seconds)) total += seconds;
  }
  return total;
}

function parentPid(pid: number): number | undefined {
  const fields = procStatFields(pid);
  // Field 4 of proc(5), the parent's pid.
  return fields === undefined ? undefined : Number(fields[1]);
}

function exitedChildrenSeconds(pid: number): number {
  const fields = procStatFields(pid);
  // Fields 16 and 17 of proc(5) (cutime, cstime), in clock ticks.
  return fields === undefined ? Number.NaN : (Number(fields[13]) + Number(fields[14])) / 100;
}

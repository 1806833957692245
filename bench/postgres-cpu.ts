import { readdirSync, readFileSync } from "node:fs";
import type pg from "pg";
import { cpuSeconds } from "./real-dapr.ts";

/**
 * CPU seconds the PostgreSQL server spent during a measurement, when it runs on this machine:
 * where a step's cost goes is half the question on a 2-core box whose server shares the cores.
 *
 * The server's processes are the postmaster and its children (backends, WAL writer, autovacuum…),
 * read from /proc (proc(5): fields utime, stime; cutime, cstime of the postmaster for children
 * that exited and were waited for, e.g. a backend whose connection closed mid-run). The postmaster's
 * pid is the first line of `postmaster.pid` in the data directory (`SHOW data_directory`:
 * superusers and pg_read_all_settings only). Undefined where any of that is not so (a remote
 * server, no privilege, not Linux): the bench then prints no server figure rather than a wrong one.
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
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** The postmaster's own CPU, its exited children's, and every live child's. */
function serverCpuSeconds(postmaster: number): number {
  let total = cpuSeconds(postmaster) + exitedChildrenSeconds(postmaster);
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/u.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // Field 4 of proc(5), the parent's pid.
      if (Number(fields[1]) === postmaster) total += cpuSeconds(Number(entry));
    } catch {
      // Gone between the listing and the read: its time is in the postmaster's cutime now.
    }
  }
  return total;
}

function exitedChildrenSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // Fields 16 and 17 of proc(5) (cutime, cstime), in clock ticks.
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return Number.NaN;
  }
}

// Resident memory of a process and all its descendants, read from /proc (Linux only), sampled on
// a timer. `npm start` is several processes (npm, tsx's launcher, the system's node, embedded
// PostgreSQL's server and backends), so one process's memoryUsage() would miss most of it.
import { readdirSync, readFileSync } from "node:fs";

/** How a process of the tree is reported: by what it is, not by its pid. */
export type ProcessGroup = "npm" | "node" | "postgres" | "other";
export const processGroups: readonly ProcessGroup[] = ["node", "postgres", "npm", "other"];

export interface GroupPeak {
  /** Peak over the samples of the group's summed VmRSS, in MB. */
  readonly rssMb: number;
  /** Peak of the summed PSS (shared pages divided among their users), in MB. */
  readonly pssMb: number;
  /** Most processes of the group seen in one sample. */
  readonly processes: number;
}

export interface TreeMemory {
  readonly samples: number;
  readonly groups: Readonly<Record<ProcessGroup, GroupPeak>>;
  /** Peak of the whole tree's sum (not the sum of the groups' peaks: they need not coincide). */
  readonly total: GroupPeak;
}

/** A process by pid and start time: a pid reused by an unrelated process is not the same one. */
export interface ProcessRef {
  readonly pid: number;
  readonly startTicks: number;
}

export interface TreeSampler {
  /** Every process seen in the tree so far: after the root exits, its orphans are no longer its descendants. */
  seen(): readonly ProcessRef[];
  stop(): TreeMemory;
}

interface ProcessSample {
  readonly group: ProcessGroup;
  readonly rssKb: number;
  readonly pssKb: number;
}

/**
 * Samples the tree under `rootPid` every `intervalMs`. `rootPid` itself is reported as `npm`
 * (the wrapper a user runs); its descendants by their executable name.
 */
export function sampleProcessTree(rootPid: number, intervalMs = 500): TreeSampler {
  const seen = new Map<number, ProcessRef>();
  const peaks = new Map<ProcessGroup | "total", { rss: number; pss: number; processes: number }>();
  let samples = 0;
  const take = () => {
    const tree = descendantsOf(rootPid);
    const sums = new Map<ProcessGroup | "total", { rss: number; pss: number; processes: number }>();
    for (const pid of tree) {
      const sample = readProcess(pid, pid === rootPid);
      if (sample === undefined) continue; // exited between the scan and the read
      const ref = refOf(pid);
      if (ref !== undefined) seen.set(pid, ref);
      for (const key of [sample.group, "total"] as const) {
        const sum = sums.get(key) ?? { rss: 0, pss: 0, processes: 0 };
        sum.rss += sample.rssKb;
        sum.pss += sample.pssKb;
        sum.processes += 1;
        sums.set(key, sum);
      }
    }
    if (tree.length === 0) return;
    samples += 1;
    for (const [key, sum] of sums) {
      const peak = peaks.get(key) ?? { rss: 0, pss: 0, processes: 0 };
      peaks.set(key, {
        rss: Math.max(peak.rss, sum.rss),
        pss: Math.max(peak.pss, sum.pss),
        processes: Math.max(peak.processes, sum.processes),
      });
    }
  };
  take();
  const timer = setInterval(take, intervalMs);
  const peakOf = (key: ProcessGroup | "total"): GroupPeak => {
    const peak = peaks.get(key) ?? { rss: 0, pss: 0, processes: 0 };
    return {
      rssMb: Math.round(peak.rss / 1024),
      pssMb: Math.round(peak.pss / 1024),
      processes: peak.processes,
    };
  };
  return {
    seen: () => [...seen.values()],
    stop() {
      clearInterval(timer);
      const groups = Object.fromEntries(processGroups.map((group) => [group, peakOf(group)])) as Record<
        ProcessGroup,
        GroupPeak
      >;
      return { samples, groups, total: peakOf("total") };
    },
  };
}

/** `rootPid` and every process whose parent chain leads to it (one scan of /proc). */
export function descendantsOf(rootPid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const ppid = parentOf(Number(entry));
    if (ppid === undefined) continue;
    const list = children.get(ppid) ?? [];
    list.push(Number(entry));
    children.set(ppid, list);
  }
  if (!isAlive(rootPid)) return [];
  const tree: number[] = [];
  const queue = [rootPid];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    tree.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return tree;
}

export function refOf(pid: number): ProcessRef | undefined {
  const stat = readStat(pid);
  return stat === undefined ? undefined : { pid, startTicks: stat.startTicks };
}

/** True while that very process exists and is not a zombie waiting to be reaped. */
export function isRunning(ref: ProcessRef): boolean {
  const stat = readStat(ref.pid);
  return stat !== undefined && stat.startTicks === ref.startTicks && stat.state !== "Z" && stat.state !== "X";
}

function isAlive(pid: number): boolean {
  const state = readStat(pid)?.state;
  return state !== undefined && state !== "Z" && state !== "X";
}

function parentOf(pid: number): number | undefined {
  return readStat(pid)?.ppid;
}

function readStat(pid: number): { state: string; ppid: number; startTicks: number } | undefined {
  const stat = readOrUndefined(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  // The name (field 2) is in parentheses and may contain spaces: parse after its closing one.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // Fields 3, 4 and 22 of proc(5): state, ppid, starttime (clock ticks after boot).
  return { state: fields[0] ?? "", ppid: Number(fields[1]), startTicks: Number(fields[19]) };
}

function readProcess(pid: number, isRoot: boolean): ProcessSample | undefined {
  const status = readOrUndefined(`/proc/${pid}/status`);
  if (status === undefined) return undefined;
  const name = /^Name:\s*(.*)$/m.exec(status)?.[1]?.trim() ?? "";
  const rssKb = Number(/^VmRSS:\s*(\d+)\s*kB/m.exec(status)?.[1] ?? 0);
  const rollup = readOrUndefined(`/proc/${pid}/smaps_rollup`);
  const pss = rollup === undefined ? undefined : /^Pss:\s*(\d+)\s*kB/m.exec(rollup)?.[1];
  // No PSS: the process exited between the two reads (a backend ending); leave it out of this sample.
  if (pss === undefined) return undefined;
  return { group: groupOf(pid, name, isRoot), rssKb, pssKb: Number(pss) };
}

function groupOf(pid: number, name: string, isRoot: boolean): ProcessGroup {
  if (isRoot) return "npm";
  if (name === "postgres") return "postgres";
  if (name === "node") return "node";
  // Node may rename its thread group (process.title): fall back to the executable.
  const argv0 = readOrUndefined(`/proc/${pid}/cmdline`)?.split("\0")[0] ?? "";
  return /(^|\/)node$/.test(argv0) ? "node" : "other";
}

function readOrUndefined(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

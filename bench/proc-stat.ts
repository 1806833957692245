import { readFileSync } from "node:fs";

/**
 * The fields of /proc/<pid>/stat after the command name (proc(5): field 3, the state, is index 0),
 * or undefined when the process is gone or this is not Linux. The name is in parentheses and may
 * hold spaces, so the fields start after the last ")".
 */
export function procStatFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * Whether the server we started is the one listening, told from its own `postmaster.pid` before
 * any login is tried.
 *
 * Why: the port is checked free just before the server starts, but another program can take it in
 * between. The server then fails to bind and exits, and a login tried meanwhile would reach that
 * program, which may ask for the password in clear text (node-postgres answers a cleartext request,
 * it has no way to refuse one). The server writes its listen address into `postmaster.pid` only
 * once its socket is bound, and status `ready` once it accepts connections; PostgreSQL does not set
 * SO_REUSEPORT, so while it holds 127.0.0.1:port nobody else can listen there.
 *
 * Layout (PostgreSQL src/include/utils/pidfile.h, LOCK_FILE_LINE_*): 1 PID, 2 data directory,
 * 3 start time, 4 port, 5 socket directory, 6 first listen address, 7 shared memory key,
 * 8 status (`starting`, `stopping`, `ready`, `standby`).
 */
export type PostmasterState = "ready" | "not yet" | "another server";

export function postmasterState(dataDir: string, expected: { pid: number; port: number }): PostmasterState {
  let lines: string[];
  try {
    lines = readFileSync(join(dataDir, "postmaster.pid"), "utf8").split("\n");
  } catch {
    return "not yet"; // written by the server moments after it starts
  }
  const pid = Number.parseInt(lines[0] ?? "", 10);
  // A file of an earlier server on this directory, or one still being written (lines come later).
  if (pid !== expected.pid) return "not yet";
  if (lines.length < 8) return "not yet";
  if (lines[3]?.trim() !== String(expected.port)) return "another server";
  if (lines[5]?.trim() !== "127.0.0.1") return "not yet";
  return lines[7]?.trim() === "ready" ? "ready" : "not yet";
}

/**
 * Waits until our postmaster says it listens on 127.0.0.1:port and is ready, or has exited, or the
 * deadline passes. Never connects: only then may a client send it the password.
 */
export async function waitForOwnPostmaster(options: {
  readonly dataDir: string;
  readonly pid: number;
  readonly port: number;
  readonly exited: Promise<string>;
  readonly deadline: number;
}): Promise<"ready" | { readonly notReady: string }> {
  let gone: string | undefined;
  void options.exited.then((code) => (gone = code));
  while (Date.now() < options.deadline) {
    if (gone !== undefined) return { notReady: `exited with ${gone}` };
    const state = postmasterState(options.dataDir, options);
    if (state === "ready") return "ready";
    if (state === "another server")
      return { notReady: `postmaster.pid names another port than ${options.port}` };
    await sleep(50);
  }
  return { notReady: "its postmaster.pid never said ready on 127.0.0.1" };
}

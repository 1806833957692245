import { spawn, type ChildProcess } from "node:child_process";
import { chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import type { PostgresBinaries } from "./embedded-pg-binaries.ts";
import { spawnIdentity, type ServerIdentity } from "./embedded-pg-os-user.ts";
import { waitForOwnPostmaster } from "./embedded-pg-postmaster-file.ts";

export interface ServerSpec {
  readonly binaries: PostgresBinaries;
  readonly identity: ServerIdentity;
  readonly dataDir: string;
  readonly port: number;
  readonly user: string;
  readonly password: string;
  readonly onLog: (line: string) => void;
}

// Messages in English whatever the machine's locale: they end up in our logs and errors.
const CHILD_ENV = { LC_ALL: "C", LANG: "C" };

/** Creates the cluster: UTF-8, C collation (the same on every machine), password authentication. */
export async function initialiseCluster(spec: ServerSpec): Promise<void> {
  mkdirSync(spec.dataDir, { recursive: true, mode: 0o700 });
  const secretDir = mkdtempSync(join(tmpdir(), "matoolkit-pg-init-"));
  const passwordFile = join(secretDir, "password");
  writeFileSync(passwordFile, `${spec.password}\n`, { mode: 0o600 });
  if (spec.identity.kind === "postgres") {
    for (const path of [spec.dataDir, secretDir, passwordFile])
      chownSync(path, spec.identity.uid, spec.identity.gid);
  }
  try {
    const child = spawn(
      spec.binaries.initdb,
      [
        `--pgdata=${spec.dataDir}`,
        "--auth=scram-sha-256",
        `--username=${spec.user}`,
        `--pwfile=${passwordFile}`,
        "--encoding=UTF8",
        "--locale=C",
      ],
      { ...spawnIdentity(spec.identity), env: CHILD_ENV, stdio: ["ignore", "pipe", "pipe"] },
    );
    const output = collectOutput(child, spec.onLog);
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on("error", reject);
      child.on("close", resolve);
    });
    if (code !== 0) throw new Error(`initdb failed (exit ${code}): ${lastLines(output())}`);
  } finally {
    rmSync(secretDir, { recursive: true, force: true });
  }
}

/**
 * Runs the server under a small shell "lifeline" in a session of its own:
 * - its own session/process group: a terminal's Ctrl-C (SIGINT to the foreground group) reaches
 *   our process only, which then stops the services first and the database last;
 * - the shell holds the read end of a pipe whose write end only we hold: when we close it, or
 *   die in any way (kill -9 included), the shell asks the server for a fast shutdown, so a crash
 *   of ours never leaves a server running forever;
 * - the shell exits when the server does, so we notice a server that died (and restart it).
 * The shell prints the server's PID first.
 */
const LIFELINE = [
  "exec 3<&0 0</dev/null",
  '"$@" 3<&- &',
  "pg=$!",
  'echo "$pg"',
  '( read -r _ <&3 || :; kill -INT "$pg" 2>/dev/null ) &',
  "watcher=$!",
  "exec 3<&-",
  'wait "$pg"; code=$?',
  'kill "$watcher" 2>/dev/null',
  'exit "$code"',
].join("\n");

export interface ServerProcess {
  readonly child: ChildProcess;
  /** The postmaster's PID. */
  readonly pid: number;
  /** Resolves with the exit code (or signal name) when the server has exited. */
  readonly exited: Promise<string>;
}

export async function spawnServer(spec: ServerSpec, readyTimeoutMs: number): Promise<ServerProcess> {
  // Whatever listens there would get our login, and may ask for the password in clear text.
  if (await isListening(spec.port)) {
    throw new Error(
      `port ${spec.port} on 127.0.0.1 is already in use by another program: the embedded PostgreSQL ` +
        `will not start there (nor send it its password). Stop that program or set MATOOLKIT_EMBEDDED_PG_PORT`,
    );
  }
  const child = spawn(
    "/bin/sh",
    [
      "-c",
      LIFELINE,
      "matoolkit-postgres",
      spec.binaries.postgres,
      "-D",
      spec.dataDir,
      "-p",
      String(spec.port),
      // 127.0.0.1 only, what every client connects to: a failed bind stops the server, rather than
      // leave it on ::1 while another program answers on 127.0.0.1.
      "-c",
      "listen_addresses=127.0.0.1",
      // No Unix socket: nothing of ours uses it, and in /tmp another user could block its lock file.
      "-c",
      "unix_socket_directories=",
    ],
    { ...spawnIdentity(spec.identity), env: CHILD_ENV, detached: true, stdio: ["pipe", "pipe", "pipe"] },
  );
  const exited = new Promise<string>((resolve) => {
    child.on("error", (error) => resolve(error.message));
    child.on("exit", (code, signal) => resolve(signal ?? String(code)));
  });
  const pid = await firstLine(child);
  const output = collectOutput(child, spec.onLog);
  const ready = await waitUntilAccepting(spec, pid, exited, readyTimeoutMs);
  if (ready !== "ready") {
    stopServer({ child, pid, exited });
    throw new Error(`PostgreSQL did not start (${ready}): ${lastLines(output())}`);
  }
  // A running server must not keep our process alive (our exit closes the lifeline and stops it).
  for (const stream of [child.stdin, child.stdout, child.stderr])
    (stream as { unref?: () => void } | null)?.unref?.();
  child.unref();
  return { child, pid, exited };
}

/** Asks for a fast shutdown (closing the lifeline) and resolves when the server has exited. */
export async function stopServer(server: ServerProcess, timeoutMs = 60_000): Promise<void> {
  server.child.stdin?.end();
  const giveUp = new AbortController();
  const outcome = await Promise.race([
    server.exited,
    sleep(timeoutMs, "timeout", { signal: giveUp.signal }).catch(() => "stopped"),
  ]);
  giveUp.abort();
  if (outcome !== "timeout") return;
  try {
    process.kill(server.pid, "SIGQUIT"); // immediate shutdown; recovery replays the WAL next start
  } catch {
    // already gone
  }
  await server.exited;
}

async function waitUntilAccepting(
  spec: ServerSpec,
  pid: number,
  exited: Promise<string>,
  timeoutMs: number,
): Promise<string> {
  let gone: string | undefined;
  void exited.then((code) => (gone = code));
  const deadline = Date.now() + timeoutMs;
  // No login before our own server says it holds the port (another program may have taken it
  // since the check above): see embedded-pg-postmaster-file.ts.
  const own = await waitForOwnPostmaster({ dataDir: spec.dataDir, pid, port: spec.port, exited, deadline });
  if (own !== "ready") return own.notReady;
  while (Date.now() < deadline) {
    if (gone !== undefined) return `exited with ${gone}`;
    const client = new pg.Client({
      host: "127.0.0.1",
      port: spec.port,
      user: spec.user,
      password: spec.password,
      database: "postgres",
      connectionTimeoutMillis: 1000,
    });
    client.on("error", () => {});
    try {
      await client.connect();
      await client.end();
      if (gone === undefined) return "ready";
    } catch (error) {
      await client.end().catch(() => {});
      // A wrong password is an answer: the server is up (a data directory still on the legacy
      // password gets its password replaced next, see embedded-pg-superuser.ts).
      if ((error as { code?: string }).code === "28P01" && gone === undefined) return "ready";
      await sleep(100);
    }
  }
  return `not accepting connections after ${Math.round(timeoutMs / 1000)} s`;
}

/** Whether something accepts connections on 127.0.0.1:port. */
async function isListening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.setTimeout(2000);
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("timeout", () => {
      socket.destroy();
      resolve(true); // something holds the port and does not answer: not ours to use either
    });
    socket.once("error", () => resolve(false));
  });
}

async function firstLine(child: ChildProcess): Promise<number> {
  const stdout = child.stdout;
  if (stdout === null) throw new Error("no output stream from the PostgreSQL launcher");
  let buffered = "";
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString("utf8");
      const newline = buffered.indexOf("\n");
      if (newline < 0) return;
      stdout.off("data", onData);
      resolve(Number.parseInt(buffered.slice(0, newline), 10));
    };
    stdout.on("data", onData);
    child.once("error", reject);
    child.once("exit", () => reject(new Error("the PostgreSQL launcher exited before starting the server")));
  });
}

/** Forwards output lines to the log and keeps the last ones for an error message. */
function collectOutput(child: ChildProcess, onLog: (line: string) => void): () => string[] {
  const recent: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    stream?.on("data", (chunk: Buffer) => {
      for (const line of chunk.toString("utf8").split("\n")) {
        if (line.trim() === "") continue;
        onLog(line);
        recent.push(line);
        if (recent.length > 20) recent.shift();
      }
    });
  }
  return () => recent;
}

function lastLines(lines: string[]): string {
  const errors = lines.filter((line) => /FATAL|ERROR|error|could not/u.test(line));
  return (errors.length > 0 ? errors : lines).slice(-3).join(" | ") || "no output";
}

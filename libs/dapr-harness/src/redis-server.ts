import { mkdirSync } from "node:fs";
import { createConnection } from "node:net";
import { join } from "node:path";
import { freePort } from "./free-port.ts";
import { startManagedProcess, waitUntilReady, type ManagedProcess } from "./managed-process.ts";

/**
 * A Redis of the harness's own (Debian's redis-server) on a free port: tests that share the
 * machine's Redis would read each other's streams, and a drill needs one it can restart with
 * `appendonly yes` (the machine's keeps nothing on disk).
 */
export interface HarnessRedis {
  readonly host: string;
  readonly port: number;
  readonly process: ManagedProcess;
  /** Stops it (SIGTERM: an append-only file is flushed) and starts it again on the same port and data. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startRedisServer(options: {
  readonly dataDir: string;
  /** appendonly yes + appendfsync always: what is acknowledged survives a restart. */
  readonly durable?: boolean;
  readonly command?: string;
}): Promise<HarnessRedis> {
  mkdirSync(options.dataDir, { recursive: true });
  const port = await freePort();
  const args = [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--dir",
    options.dataDir,
    "--save",
    "",
    "--daemonize",
    "no",
    ...(options.durable === true
      ? ["--appendonly", "yes", "--appendfsync", "always"]
      : ["--appendonly", "no"]),
  ];
  const start = async () => {
    const process = startManagedProcess({
      name: `redis-server :${port}`,
      command: options.command ?? "redis-server",
      args,
      logFile: join(options.dataDir, "redis.log"),
    });
    await waitUntilReady(process, () => redisPing(port), { timeoutMs: 20_000, what: "answering PING" });
    return process;
  };
  let process = await start();
  return {
    host: "127.0.0.1",
    port,
    get process() {
      return process;
    },
    async restart() {
      await process.stop();
      process = await start();
    },
    stop: () => process.stop(),
  };
}

async function redisPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    socket.setTimeout(1_000);
    socket.once("connect", () => socket.write("PING\r\n"));
    socket.once("data", (data) => {
      socket.destroy();
      resolve(data.toString().startsWith("+PONG"));
    });
    socket.once("error", () => resolve(false));
    socket.once("timeout", () => {
      socket.destroy();
      resolve(false);
    });
  });
}

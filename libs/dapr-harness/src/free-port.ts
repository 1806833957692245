import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:net";

/**
 * Ports for servers that bind later (daprd, placement, PostgreSQL, an app behind a sidecar) in
 * tests, drills and benchmarks.
 *
 * Why not "listen on port 0, close, hand the port on": that port is in the OS's ephemeral range,
 * where every outbound connection of the machine (a test run opens thousands: PostgreSQL, Redis,
 * HTTP) and every other listen(0) takes its local port too, so by the time the server binds it,
 * it may be taken (CI, stop 39: `listen EADDRINUSE: address already in use 127.0.0.1:43739`).
 *
 * Instead each process holds a SLOT — it listens on one of a few slot ports for as long as it
 * lives, so the OS itself keeps two live processes off the same slot and frees it when the process
 * dies, with no lock files to go stale — and hands out only ports of its slot's BLOCK, below the
 * ephemeral range, where the OS never picks a port by itself. A port of the block that something
 * is listening on (a daemon left over by an earlier process) is skipped.
 */
export interface PortLayout {
  /** The first slot port; slots are `firstSlotPort` … `firstSlotPort + slots - 1`. */
  readonly firstSlotPort: number;
  readonly slots: number;
  /** Slot k hands out `firstBlockPort + k × blockSize` … `+ blockSize - 1`. */
  readonly firstBlockPort: number;
  readonly blockSize: number;
  readonly host: string;
}

export interface PortAllocator {
  /** A port nobody listens on, not handed out by any other live process using the same layout. */
  next(): Promise<number>;
  /** Gives the slot back (a process's slot is otherwise given back when it exits). */
  close(): Promise<void>;
}

export function createPortAllocator(layout: PortLayout): PortAllocator {
  let slot: Promise<{ server: Server; index: number }> | undefined;
  let cursor = -1;
  return {
    async next() {
      // A refusal (every slot held) is not remembered: the next call tries again.
      slot ??= holdSlot(layout).catch((error: unknown) => {
        slot = undefined;
        throw error;
      });
      const { index } = await slot;
      const first = layout.firstBlockPort + index * layout.blockSize;
      // Start somewhere in the block: a daemon an earlier holder of this slot started may be binding
      // the block's first ports right now.
      if (cursor < 0) cursor = Math.floor(Math.random() * layout.blockSize);
      for (let tried = 0; tried < layout.blockSize; tried += 1) {
        const port = first + (cursor % layout.blockSize);
        cursor += 1;
        if (await canListen(layout.host, port)) return port;
      }
      throw new Error(
        `Every port of ${first}–${first + layout.blockSize - 1} (port slot ${index}) is being listened on`,
      );
    },
    async close() {
      if (slot === undefined) return;
      const { server } = await slot;
      slot = undefined;
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function holdSlot(layout: PortLayout): Promise<{ server: Server; index: number }> {
  for (let index = 0; index < layout.slots; index += 1) {
    const server = await listenOrUndefined(layout.host, layout.firstSlotPort + index);
    if (server !== undefined) {
      // Held for the process's life, but never what keeps it alive.
      server.unref();
      return { server, index };
    }
  }
  throw new Error(
    `All ${layout.slots} port slots (${layout.host}:${layout.firstSlotPort}–${layout.firstSlotPort + layout.slots - 1}) are held: more processes are taking test ports at once than there are slots`,
  );
}

function listenOrUndefined(host: string, port: number): Promise<Server | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(undefined));
    server.listen({ host, port, exclusive: true }, () => resolve(server));
  });
}

async function canListen(host: string, port: number): Promise<boolean> {
  const server = await listenOrUndefined(host, port);
  if (server === undefined) return false;
  await new Promise((resolve) => server.close(resolve));
  return true;
}

/** The lowest port the OS picks by itself for listen(0) and outbound connections. */
export function ephemeralRangeStart(): number {
  try {
    // Linux; other systems start theirs higher (macOS, Windows: 49152).
    const [low] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/);
    const parsed = Number(low);
    if (Number.isInteger(parsed) && parsed > 0) return parsed;
  } catch {
    // Not Linux.
  }
  return 32_768;
}

const SLOTS = 128;
const FIRST_SLOT_PORT = 19_000;
const FIRST_BLOCK_PORT = 20_000;

/**
 * The layout every process of this repository shares: 128 slots, each with its part of
 * 20000 … (the ephemeral range's start − 1), ~99 ports per slot on a default Linux.
 */
export function defaultPortLayout(ephemeralStart = ephemeralRangeStart()): PortLayout | undefined {
  const blockSize = Math.floor((ephemeralStart - FIRST_BLOCK_PORT) / SLOTS);
  // A machine whose ephemeral range starts low leaves no room below it: let the OS choose there.
  if (blockSize < 16) return undefined;
  return {
    firstSlotPort: FIRST_SLOT_PORT,
    slots: SLOTS,
    firstBlockPort: FIRST_BLOCK_PORT,
    blockSize,
    host: "127.0.0.1",
  };
}

const layout = defaultPortLayout();
const allocator = layout === undefined ? undefined : createPortAllocator(layout);

/** A port for a server that binds it later (see the top of this file). */
export async function freePort(): Promise<number> {
  return allocator === undefined ? osChosenPort() : allocator.next();
}

/** Several distinct ports for servers that bind them later. */
export async function freePorts(count: number): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < count) {
    const port = await freePort();
    // Only the OS-chosen fallback can repeat itself: a port it closed is free to hand out again.
    if (!ports.includes(port)) ports.push(port);
  }
  return ports;
}

function osChosenPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address !== null
          ? resolve(address.port)
          : reject(new Error("no port")),
      );
    });
  });
}

import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { once } from "node:events";
import { createServer, type Server } from "node:net";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import {
  createPortAllocator,
  defaultPortLayout,
  ephemeralRangeStart,
  freePorts,
  type PortLayout,
} from "./free-port.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A layout of its own per test (below the shared one's slots), so runs side by side do not meet. */
function testLayout(slots: number, blockSize: number): PortLayout {
  const firstSlotPort = 10_000 + Math.floor(Math.random() * 800) * 10;
  return { firstSlotPort, slots, firstBlockPort: firstSlotPort + slots, blockSize, host: "127.0.0.1" };
}

function listenOn(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve(server));
  });
}

/** Another process taking `count` ports from `layout`; it holds its slot until killed. */
async function portsOfAnotherProcess(
  layout: PortLayout,
  count: number,
): Promise<{ ports: number[]; child: ChildProcessWithoutNullStreams } | { error: string }> {
  const module = fileURLToPath(new URL("./free-port.ts", import.meta.url));
  const script = `
    const { createPortAllocator } = await import(${JSON.stringify(module)});
    const allocator = createPortAllocator(${JSON.stringify(layout)});
    try {
      const ports = [];
      for (let i = 0; i < ${count}; i += 1) ports.push(await allocator.next());
      console.log(JSON.stringify({ ports }));
      setInterval(() => undefined, 60_000);
    } catch (error) {
      console.log(JSON.stringify({ error: error.message }));
      process.exit(0);
    }`;
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script]);
  cleanups.push(() => child.kill("SIGKILL"));
  let output = "";
  child.stdout.setEncoding("utf8");
  for await (const chunk of child.stdout) {
    output += chunk;
    if (output.includes("\n")) break;
  }
  const answer = JSON.parse(output) as { ports: number[] } | { error: string };
  return "ports" in answer ? { ports: answer.ports, child } : answer;
}

describe("freePorts", () => {
  it("hands out distinct ports below the ephemeral range, each free to listen on", async () => {
    const ports = await freePorts(64);
    expect(new Set(ports).size).toBe(64);
    // Outbound connections and listen(0) take their ports from the ephemeral range, never these.
    for (const port of ports) expect(port).toBeLessThan(ephemeralRangeStart());
    const servers = await Promise.all(ports.map(listenOn));
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  });

  it("leaves the choice to the OS where the ephemeral range leaves no room below it", () => {
    expect(defaultPortLayout(20_500)).toBeUndefined();
    expect(defaultPortLayout(32_768)?.blockSize).toBe(99);
  });
});

describe("createPortAllocator", () => {
  it("never hands two live processes the same port, and frees a killed process's slot", async () => {
    const layout = testLayout(2, 20);
    const first = await portsOfAnotherProcess(layout, 12);
    const second = await portsOfAnotherProcess(layout, 12);
    if (!("ports" in first) || !("ports" in second)) throw new Error(JSON.stringify({ first, second }));
    expect(new Set([...first.ports, ...second.ports]).size).toBe(24);

    const third = await portsOfAnotherProcess(layout, 1);
    expect(third).toEqual({
      error: `All 2 port slots (127.0.0.1:${layout.firstSlotPort}–${layout.firstSlotPort + 1}) are held: more processes are taking test ports at once than there are slots`,
    });

    // No cleanup to run: the OS closes a dead process's slot.
    first.child.kill("SIGKILL");
    await once(first.child, "exit");
    const fourth = await portsOfAnotherProcess(layout, 12);
    if (!("ports" in fourth)) throw new Error(fourth.error);
    expect(fourth.ports.filter((port) => second.ports.includes(port))).toEqual([]);
  });

  it("tries for a slot again on the next call once one was refused", async () => {
    const layout = testLayout(1, 4);
    const squatter = await listenOn(layout.firstSlotPort);
    const allocator = createPortAllocator(layout);
    cleanups.push(() => allocator.close());
    await expect(allocator.next()).rejects.toThrow("All 1 port slots");
    await new Promise((resolve) => squatter.close(resolve));
    const port = await allocator.next();
    expect(port - layout.firstBlockPort).toBeGreaterThanOrEqual(0);
    expect(port - layout.firstBlockPort).toBeLessThan(4);
  });

  it("skips a port of its block that something listens on, and says when all of them are", async () => {
    const layout = testLayout(1, 3);
    const allocator = createPortAllocator(layout);
    cleanups.push(() => allocator.close());
    const block = [0, 1, 2].map((offset) => layout.firstBlockPort + offset);
    const squatters = [await listenOn(block[1]!)];
    cleanups.push(() => squatters.forEach((server) => server.close()));

    const handed = [];
    for (let i = 0; i < 6; i += 1) handed.push(await allocator.next());
    expect(new Set(handed)).toEqual(new Set([block[0], block[2]]));

    squatters.push(await listenOn(block[0]!), await listenOn(block[2]!));
    await expect(allocator.next()).rejects.toThrow(
      `Every port of ${block[0]}–${block[2]} (port slot 0) is being listened on`,
    );
  });
});

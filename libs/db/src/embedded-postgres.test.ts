import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "@matoolkit/testing";
import { embeddedPasswordFile, startEmbeddedPostgres, type SupervisionEvent } from "./embedded-postgres.ts";
import { readPostmasterPid } from "./embedded-pg-stale-server.ts";

const root = mkdtempSync(join(tmpdir(), "matoolkit-embedded-pg-test-"));
chmodSync(root, 0o755); // as root the server runs as `postgres`, which must enter it
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function selectOne(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  client.on("error", () => {});
  try {
    await client.connect();
    return (await client.query<{ one: number }>("SELECT 1 AS one")).rows[0]!.one;
  } finally {
    await client.end().catch(() => {});
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function waitFor(what: string, check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check().valueOf())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("embedded PostgreSQL", { timeout: 60_000 }, () => {
  it("restarts a server that was killed (kill -9), and new connections work again", async () => {
    const events: SupervisionEvent[] = [];
    const server = await startEmbeddedPostgres({
      dataDir: join(root, "supervised"),
      port: await freePort(),
      persistent: false,
      onSupervision: (event) => events.push(event),
    });
    try {
      const first = server.serverPid();
      process.kill(first, "SIGKILL");
      await waitFor("the restart", () => events.some((event) => event.kind === "restarted"));
      expect(events[0]).toEqual({ kind: "exited", exit: "137" });
      expect(server.serverPid()).not.toBe(first);
      expect(await selectOne(server.adminUrl)).toBe(1);
    } finally {
      await server.stop();
    }
  });

  it("stops with its owner: a killed owner's server shuts itself down, and the next start on the data directory works", async () => {
    const dataDir = join(root, "orphan");
    const port = await freePort();
    // The owner: a process that starts the server and then is killed with SIGKILL (no cleanup).
    const script = join(root, "owner.mts");
    const embedded = fileURLToPath(new URL("./embedded-postgres.ts", import.meta.url));
    writeFileSync(
      script,
      `import { startEmbeddedPostgres } from ${JSON.stringify(embedded)};
const server = await startEmbeddedPostgres({ dataDir: ${JSON.stringify(dataDir)}, port: ${port}, persistent: true });
process.stdout.write("ready " + server.serverPid() + "\\n");
setInterval(() => {}, 1000);
`,
    );
    const owner = spawn(process.execPath, ["--import", "tsx", script], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const serverPid = await new Promise<number>((resolve, reject) => {
      owner.stdout.on("data", (chunk: Buffer) => {
        const match = /ready (\d+)/u.exec(chunk.toString());
        if (match) resolve(Number(match[1]));
      });
      owner.once("exit", (code) => reject(new Error(`owner exited with ${code}`)));
    });
    // Another process of the same user connects with the data directory's password file.
    const password = readFileSync(embeddedPasswordFile(dataDir), "utf8").trim();
    const fromFile = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
    try {
      expect(await selectOne(fromFile)).toBe(1);
    } finally {
      owner.kill("SIGKILL");
    }
    await waitFor("the orphaned server to stop", () => !isAlive(serverPid));

    // A stale postmaster.pid naming a live process that is not PostgreSQL (a reused PID) is cleared.
    writeFileSync(join(dataDir, "postmaster.pid"), `${process.pid}\n${dataDir}\n`);
    const next = await startEmbeddedPostgres({ dataDir, port, persistent: false });
    try {
      expect(readPostmasterPid(join(dataDir, "postmaster.pid"))).toBe(next.serverPid());
      expect(await selectOne(next.adminUrl)).toBe(1);
    } finally {
      await next.stop();
    }
    expect(isAlive(next.serverPid())).toBe(false);
  });
});

import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { readPostmasterPid } from "../../../libs/db/src/embedded-pg-stale-server.ts";
import { freePort } from "@matoolkit/testing";

const repoRoot = resolve(fileURLToPath(import.meta.url), "../../../..");
const dataDir = mkdtempSync(join(tmpdir(), "matoolkit-ctrl-c-"));
chmodSync(dataDir, 0o755); // as root the embedded server runs as `postgres`, which must enter it
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

describe("Ctrl-C in a terminal (SIGINT to the whole foreground process group)", { timeout: 120_000 }, () => {
  it("stops the services first and the embedded database last, exit 0, no errors, no server left", async () => {
    // tsx, as `npm start` runs it, in a process group of its own as a terminal job is (npm in front
    // of it exits at once on Ctrl-C by its own choice; what matters is what tsx and our process do).
    const child = spawn(join(repoRoot, "node_modules/.bin/tsx"), ["services/all-in-one/src/main.ts"], {
      cwd: repoRoot,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        DATABASE_URL: "",
        PORT: String(await freePort()),
        MATOOLKIT_EMBEDDED_PG_PORT: String(await freePort()),
        MATOOLKIT_DATA_DIR: dataDir,
        LOG_LEVEL: "info",
      },
    });
    let output = "";
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const exitCode = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
    const deadline = Date.now() + 90_000;
    while (!output.includes("matoolkit is running")) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`did not start:\n${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const serverPid = readPostmasterPid(join(dataDir, "postgres", "postmaster.pid"));
    expect(serverPid).toBeGreaterThan(0);
    const startedAt = output.length;
    const stdoutAtStart = stdout.length;

    process.kill(-child.pid!, "SIGINT");
    expect(await exitCode).toBe(0);

    const shutdown = output.slice(startedAt);
    expect(shutdown, shutdown).toContain("SIGINT received, shutting down");
    // That line is on stderr and the logs on stdout: two pipes, whose lines may reach us in
    // either order (seen here: the worker's log first). The order asserted is within the logs.
    const logs = stdout.slice(stdoutAtStart);
    const order = ["worker stopped", "embedded PostgreSQL stopped"].map((line) => logs.indexOf(line));
    expect(
      order.every((at) => at >= 0),
      shutdown,
    ).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    // A database stopped under the services would show as errors (pg-boss, pools) while they stop.
    const errors = shutdown
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .filter((line) => (JSON.parse(line) as { level: number }).level >= 50);
    expect(errors).toEqual([]);
    expect(isAlive(serverPid!)).toBe(false);
  });
});

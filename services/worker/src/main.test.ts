import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";

const repo = fileURLToPath(new URL("../../../", import.meta.url));
const tsx = join(repo, "node_modules", ".bin", "tsx");

interface Exit {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function run(args: string[], env: Record<string, string>, timeoutMs = 60_000): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(tsx, args, { cwd: repo, env: { PATH: process.env.PATH ?? "", ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`timed out; stderr: ${stderr}`));
    }, timeoutMs);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe("runUntilSignalled: shutdown requested by the service", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "matoolkit-run-until-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it.each([
    ["after start-up", "setTimeout(() => requestShutdown('idle for 1s'), 50);"],
    ["during start-up (carried out once started)", "requestShutdown('idle for 1s');"],
  ])("%s: stops like SIGTERM and exits 0", async (_, request) => {
    const script = join(dir, `service-${Math.random().toString(36).slice(2)}.mts`);
    const platform = join(repo, "libs/platform/src/run-until-signalled.ts");
    await writeFile(
      script,
      `import { runUntilSignalled } from ${JSON.stringify(platform)};
await runUntilSignalled("svc", async ({ requestShutdown }) => {
  ${request}
  const keepAlive = setInterval(() => {}, 1000);
  return async () => { clearInterval(keepAlive); process.stdout.write("stopped\\n"); };
});`,
    );
    const exit = await run([script], {}, 30_000);
    expect(exit.code).toBe(0);
    expect(exit.stdout).toBe("stopped\n");
    expect(exit.stderr).toBe("svc: idle for 1s, shutting down\n");
  });
});

describe("worker main.ts", () => {
  let testDb: TestDatabase;
  beforeAll(async () => {
    testDb = await createTestDatabase();
  });
  afterAll(async () => {
    await testDb?.drop();
  });

  it("starts with a simulated tenant and custom functions, logs them, and exits 0 once idle", async () => {
    const exit = await run(["services/worker/src/main.ts"], {
      DATABASE_URL: testDb.url,
      LOG_LEVEL: "info",
      MATOOLKIT_WORKER_ID: "worker-idle-main",
      MATOOLKIT_TENANT: "simulated",
      MATOOLKIT_SIMULATED_TENANT_SEED: "examples/fabrikam-tenant.json",
      MATOOLKIT_FUNCTIONS_DIR: "examples/custom-functions",
      MATOOLKIT_WORKER_IDLE_EXIT_SECONDS: "1",
    });
    expect(exit.stderr).toContain("worker: idle for 1s, shutting down");
    expect(exit.code).toBe(0);
    const lines = exit.stdout
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const custom = lines.find((line) => line.functions !== undefined && line.files !== undefined);
    expect(custom).toMatchObject({
      files: ["examples/custom-functions/Get-MigrationWave.ts"],
      functions: ["Get-MigrationWave"],
    });
    const target = lines.find((line) => typeof line.tenant === "string");
    expect(target?.tenant).toMatch(
      /^simulated tenant 5f1c2d3e-0a1b-4c2d-8e3f-9a0b1c2d3e4f at http:\/\/127\.0\.0\.1:\d+/,
    );
    expect(lines.some((line) => line.msg === "worker idle: no delivery and no running job")).toBe(true);
  });

  it("fails fast naming a bad tenant variable, without quoting the secret", async () => {
    const exit = await run(["services/worker/src/main.ts"], {
      DATABASE_URL: testDb.url,
      MATOOLKIT_TENANT: "entra",
      MATOOLKIT_TENANT_ID: "contoso.onmicrosoft.com",
      MATOOLKIT_CLIENT_ID: "0f3c1d2e-1111-4222-8333-944455556666",
      MATOOLKIT_TENANT_AUTH: "certificate",
      MATOOLKIT_CLIENT_CERTIFICATE_PATH: "/nonexistent/app.pfx",
      MATOOLKIT_CLIENT_SECRET: "Sup3r~Secret.Value",
    });
    expect(exit.code).toBe(1);
    expect(exit.stderr).toContain(
      "MATOOLKIT_CLIENT_SECRET: is not used with MATOOLKIT_TENANT_AUTH=certificate",
    );
    expect(exit.stderr).not.toContain("Sup3r~Secret.Value");
  });

  it("fails fast when the certificate cannot be read, naming the variable", async () => {
    const exit = await run(["services/worker/src/main.ts"], {
      DATABASE_URL: testDb.url,
      MATOOLKIT_TENANT: "entra",
      MATOOLKIT_TENANT_ID: "contoso.onmicrosoft.com",
      MATOOLKIT_CLIENT_ID: "0f3c1d2e-1111-4222-8333-944455556666",
      MATOOLKIT_TENANT_AUTH: "certificate",
      MATOOLKIT_CLIENT_CERTIFICATE_PATH: "/nonexistent/app.pfx",
      MATOOLKIT_CLIENT_CERTIFICATE_PASSWORD: "Pfx~Passw0rd",
    });
    expect(exit.code).toBe(1);
    expect(exit.stderr).toContain(
      "MATOOLKIT_CLIENT_CERTIFICATE_PATH (/nonexistent/app.pfx): cannot read the file (ENOENT)",
    );
    expect(exit.stderr).not.toContain("Pfx~Passw0rd");
  });
});

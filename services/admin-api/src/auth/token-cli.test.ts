import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { decodeJwt } from "jose";
import { afterAll, describe, expect, it } from "vitest";
import { createVerifierForConfig } from "@matoolkit/auth";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");

const dataDirs: string[] = [];

/** Each test gets a fresh data dir so the (slow to start) CLI runs can go concurrently. */
async function freshDataDir(): Promise<string> {
  const dataDir = await mkdtemp(path.join(tmpdir(), "token-cli-"));
  dataDirs.push(dataDir);
  return dataDir;
}

afterAll(async () => {
  await Promise.all(dataDirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

function runTokenCli(dataDir: string, args: string[], env: Record<string, string> = {}) {
  const { MATOOLKIT_AUTH_MODE: _mode, ...inherited } = process.env;
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn("npx", ["tsx", "services/admin-api/src/token-cli.ts", ...args], {
      cwd: repoRoot,
      env: { ...inherited, MATOOLKIT_DATA_DIR: dataDir, ...env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const localVerifier = (dataDir: string) =>
  createVerifierForConfig({ mode: "local", dataDir, issuer: "matoolkit-local", audience: "api://matoolkit" });

describe.concurrent("token CLI", () => {
  it.each(["Reader", "Operator"])("prints only a token the API accepts, with the role %s", async (role) => {
    const dataDir = await freshDataDir();
    const { code, stdout } = await runTokenCli(dataDir, ["--role", role]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
    const principal = await (await localVerifier(dataDir)).verify(stdout.trim());
    expect(principal).toMatchObject({ identity: `local-${role.toLowerCase()}`, roles: [role] });
  });

  it("honours --name and --ttl", async () => {
    const { code, stdout } = await runTokenCli(await freshDataDir(), [
      "--role",
      "Admin",
      "--name",
      "alice@example.test",
      "--ttl",
      "15m",
    ]);
    expect(code).toBe(0);
    const claims = decodeJwt(stdout.trim());
    expect(claims).toMatchObject({ preferred_username: "alice@example.test", roles: ["Admin"] });
    expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(900);
  });

  it("issues tokens from one shared key when two CLIs start at once on a fresh data dir", async () => {
    const dataDir = await freshDataDir();
    const runs = await Promise.all([1, 2].map(() => runTokenCli(dataDir, ["--role", "Admin"])));
    const verifier = await localVerifier(dataDir);
    for (const run of runs) {
      expect(run.code).toBe(0);
      await expect(verifier.verify(run.stdout.trim())).resolves.toMatchObject({ roles: ["Admin"] });
    }
  });

  it.each([
    [["--role", "admin"], /Invalid --role "admin": allowed values are Admin, Operator, Reader/],
    [["--role", "Admin", "--ttl", "forever"], /Invalid --ttl "forever"/],
    [["--role", "Admin", "--colour", "red"], /colour/],
  ])("exits 2 with a clear message for bad flags: %o", async (args, message) => {
    const { code, stdout, stderr } = await runTokenCli(await freshDataDir(), args);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toMatch(message);
  });

  it("refuses in Entra mode and points at Entra ID", async () => {
    const { code, stdout, stderr } = await runTokenCli(await freshDataDir(), ["--role", "Admin"], {
      MATOOLKIT_AUTH_MODE: "entra",
      AZURE_AD_AUDIENCE: "api://matoolkit-admin",
    });
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toMatch(/only accepts tokens issued by Entra ID/);
    expect(stderr).toContain("az account get-access-token --resource api://matoolkit-admin");
  });

  it("in Entra mode without AZURE_AD_AUDIENCE, points at the client id's App ID URI", async () => {
    const clientId = "6e9b2f4a-1c3d-4e5f-8a7b-9c0d1e2f3a4b";
    const { code, stderr } = await runTokenCli(await freshDataDir(), ["--role", "Admin"], {
      MATOOLKIT_AUTH_MODE: "entra",
      AZURE_AD_CLIENT_ID: clientId,
    });
    expect(code).toBe(1);
    expect(stderr).toContain(`az account get-access-token --resource api://${clientId}`);
  });
});

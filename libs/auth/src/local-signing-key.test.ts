import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadOrCreateLocalSigningKey, localSigningKeyPath } from "./local-signing-key.ts";

let dataDir: string;

beforeEach(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), "auth-key-"));
});

afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

describe("loadOrCreateLocalSigningKey", () => {
  it("creates an owner-only ES256 private JWK with a kid on first use", async () => {
    const key = await loadOrCreateLocalSigningKey(dataDir);
    const file = localSigningKeyPath(dataDir);
    expect(file).toBe(path.join(dataDir, "auth", "signing-key.json"));
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(await readFile(file, "utf8")) as Record<string, unknown>;
    expect(stored).toMatchObject({ kty: "EC", crv: "P-256", alg: "ES256", kid: key.kid });
    expect(typeof stored.d).toBe("string");
    expect(key.publicJwk).not.toHaveProperty("d");
  });

  it("reuses the stored key on later loads", async () => {
    const first = await loadOrCreateLocalSigningKey(dataDir);
    const stored = await readFile(localSigningKeyPath(dataDir), "utf8");
    const second = await loadOrCreateLocalSigningKey(dataDir);
    expect(second.kid).toBe(first.kid);
    expect(second.publicJwk).toEqual(first.publicJwk);
    expect(await readFile(localSigningKeyPath(dataDir), "utf8")).toBe(stored);
  });

  it("ends with one key, and no temp files, when many callers race to create it", async () => {
    const keys = await Promise.all(Array.from({ length: 8 }, () => loadOrCreateLocalSigningKey(dataDir)));
    const onDisk = await loadOrCreateLocalSigningKey(dataDir);
    expect(new Set(keys.map((key) => key.kid))).toEqual(new Set([onDisk.kid]));
    expect(await readdir(path.join(dataDir, "auth"))).toEqual(["signing-key.json"]);
  });

  it("refuses a corrupt key file without revealing its contents", async () => {
    await loadOrCreateLocalSigningKey(dataDir);
    await writeFile(localSigningKeyPath(dataDir), '{"kty":"EC","d":"secret-material"}');
    const failure = loadOrCreateLocalSigningKey(dataDir);
    await expect(failure).rejects.toThrow(/not a valid ES256 private JWK; delete it/);
    await expect(failure).rejects.not.toThrow(/secret-material/);
  });
});

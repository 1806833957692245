import { randomBytes } from "node:crypto";
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadSecretKeyring } from "./secret-key-source.ts";
import { secretKeySourceFromEnv } from "./secrets-config.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "secrets-key-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const base64Key = () => randomBytes(32).toString("base64");

describe("the secrets key source", () => {
  it("creates the data directory's key file 0600 on first start, and the same key after", async () => {
    const dataDir = join(dir, "data");
    const source = secretKeySourceFromEnv({}, dataDir);
    const [first, concurrent] = await Promise.all([loadSecretKeyring(source), loadSecretKeyring(source)]);
    expect(concurrent.current.id).toBe(first.current.id);
    expect((await stat(join(dataDir, "secrets.key"))).mode & 0o777).toBe(0o600);
    expect((await loadSecretKeyring(source)).current.id).toBe(first.current.id);
  });

  it("refuses a data directory key file others can read", async () => {
    const source = secretKeySourceFromEnv({}, dir);
    await loadSecretKeyring(source);
    await chmod(join(dir, "secrets.key"), 0o644);
    await expect(loadSecretKeyring(source)).rejects.toThrow("readable by other users");
  });

  it("reads MATOOLKIT_SECRETS_KEY with previous keys, and a key file listing current then previous", async () => {
    const [current, previous] = [base64Key(), base64Key()];
    const inline = await loadSecretKeyring(
      secretKeySourceFromEnv(
        { MATOOLKIT_SECRETS_KEY: current, MATOOLKIT_SECRETS_PREVIOUS_KEYS: previous },
        dir,
      ),
    );
    const path = join(dir, "mounted.key");
    await writeFile(path, `# comment\n${current}\n${previous}\n`);
    const fromFile = await loadSecretKeyring(
      secretKeySourceFromEnv({ MATOOLKIT_SECRETS_KEY_FILE: path }, dir),
    );
    expect(fromFile.current.id).toBe(inline.current.id);
    expect(fromFile.keyIds).toEqual(inline.keyIds);
    expect(inline.keyIds).toHaveLength(2);
  });

  it("names the setting, never the value, when a key is malformed; refuses both settings at once", async () => {
    const bad = "c2hvcnQ=";
    const error = await loadSecretKeyring(secretKeySourceFromEnv({ MATOOLKIT_SECRETS_KEY: bad }, dir)).catch(
      (caught: Error) => caught,
    );
    expect((error as Error).message).toContain("must be 32 random bytes in base64");
    expect((error as Error).message).not.toContain(bad);
    expect(() =>
      secretKeySourceFromEnv({ MATOOLKIT_SECRETS_KEY: base64Key(), MATOOLKIT_SECRETS_KEY_FILE: "/x" }, dir),
    ).toThrow("set only one of MATOOLKIT_SECRETS_KEY, MATOOLKIT_SECRETS_KEY_FILE");
    await expect(
      loadSecretKeyring(secretKeySourceFromEnv({ MATOOLKIT_SECRETS_KEY_FILE: join(dir, "missing") }, dir)),
    ).rejects.toThrow("cannot be read (ENOENT)");
    expect(await readFile(join(dir, "missing")).catch(() => "absent")).toBe("absent");
  });

  it("reads the Key Vault settings: an https vault, the default secret name, one source at a time", () => {
    expect(
      secretKeySourceFromEnv({ MATOOLKIT_SECRETS_KEYVAULT_URL: "https://kv-dev.vault.azure.net/" }, dir),
    ).toEqual({
      kind: "key-vault",
      vaultUrl: "https://kv-dev.vault.azure.net",
      secretName: "matoolkit-secrets-key",
    });
    const url = "https://kv-dev.vault.azure.net";
    expect(() =>
      secretKeySourceFromEnv({ MATOOLKIT_SECRETS_KEYVAULT_URL: "http://kv-dev.vault.azure.net" }, dir),
    ).toThrow("MATOOLKIT_SECRETS_KEYVAULT_URL: must be an https:// URL");
    expect(() =>
      secretKeySourceFromEnv(
        { MATOOLKIT_SECRETS_KEYVAULT_URL: url, MATOOLKIT_SECRETS_KEYVAULT_SECRET: "key_1" },
        dir,
      ),
    ).toThrow("MATOOLKIT_SECRETS_KEYVAULT_SECRET: letters, digits and hyphens, 127 at most");
    expect(() => secretKeySourceFromEnv({ MATOOLKIT_SECRETS_KEYVAULT_SECRET: "k" }, dir)).toThrow(
      "MATOOLKIT_SECRETS_KEYVAULT_SECRET needs MATOOLKIT_SECRETS_KEYVAULT_URL",
    );
    expect(() =>
      secretKeySourceFromEnv(
        { MATOOLKIT_SECRETS_KEYVAULT_URL: url, MATOOLKIT_SECRETS_KEY: base64Key() },
        dir,
      ),
    ).toThrow("set only one of MATOOLKIT_SECRETS_KEY, MATOOLKIT_SECRETS_KEYVAULT_URL");
  });
});

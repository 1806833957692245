import { randomBytes, randomUUID } from "node:crypto";
import { link, mkdir, readFile, stat, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { loadKeyVaultKeyring, type KeyVaultAccess, type KeyVaultKeySource } from "./key-vault-key-source.ts";
import { SecretKeyring, secretKeyOf, type SecretKey } from "./secret-keyring.ts";

/**
 * Where the secrets key comes from, chosen at the service edge (secrets-config.ts):
 * - `inline`: base64 keys from the environment (a Kubernetes secret, a Key Vault reference);
 * - `file`: a file of base64 keys, one a line, the first the current one (a mounted secret);
 * - `data-dir`: `<dataDir>/secrets.key`, created 0600 on first start (local and embedded mode);
 * - `key-vault`: every enabled version of a Key Vault secret, read with the process's identity
 *   (Container Apps; key-vault-key-source.ts).
 * Previous keys stay readable, so rotation is: put the new key first, keep the old one after it,
 * restart (every row is sealed again with the new key at start), then drop the old one. In Key
 * Vault: add a version, restart; disable the old version once nothing uses it.
 */
export type SecretKeySource =
  | { readonly kind: "inline"; readonly current: string; readonly previous: readonly string[] }
  | { readonly kind: "file"; readonly path: string }
  | { readonly kind: "data-dir"; readonly dataDir: string }
  | KeyVaultKeySource;

export const DATA_DIR_KEY_FILE = "secrets.key";

/** `keyVault`: how to reach the vault, required for a `key-vault` source (keyVaultAccessFromEnv). */
export async function loadSecretKeyring(
  source: SecretKeySource,
  keyVault?: KeyVaultAccess,
): Promise<SecretKeyring> {
  switch (source.kind) {
    case "key-vault":
      if (keyVault === undefined)
        throw new Error("a Key Vault secrets key needs the vault access (an identity)");
      return loadKeyVaultKeyring(source, keyVault);
    case "inline":
      return keyringOf([source.current, ...source.previous], "the secrets key setting");
    case "file":
      return keyringOf(linesOf(await readKeyFile(source.path)), `key file ${source.path}`);
    case "data-dir": {
      const path = join(source.dataDir, DATA_DIR_KEY_FILE);
      await createKeyFileOnce(source.dataDir, path);
      const mode = (await stat(path)).mode & 0o777;
      if ((mode & 0o077) !== 0) {
        throw new Error(
          `key file ${path} is readable by other users (mode ${mode.toString(8)}): chmod 600 it`,
        );
      }
      return keyringOf(linesOf(await readKeyFile(path)), `key file ${path}`);
    }
  }
}

/** Decodes base64 keys (first = current); errors name where the key came from, never its value. */
export function keyringOf(encoded: readonly string[], origin: string): SecretKeyring {
  const keys: SecretKey[] = encoded.map((text, index) => {
    const bytes = Buffer.from(text.trim(), "base64");
    if (bytes.length !== 32 || !/^[A-Za-z0-9+/_-]+={0,2}$/u.test(text.trim())) {
      throw new Error(
        `${origin}: key ${index + 1} must be 32 random bytes in base64 (openssl rand -base64 32)`,
      );
    }
    return secretKeyOf(bytes);
  });
  const [current, ...previous] = keys;
  if (current === undefined) throw new Error(`${origin}: holds no key`);
  return new SecretKeyring(current, previous);
}

function linesOf(text: string): string[] {
  return text
    .split(/\r?\n/u)
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
}

async function readKeyFile(path: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    throw new Error(`key file ${path} cannot be read (${(error as { code?: string }).code ?? "error"})`);
  }
}

/**
 * A fresh random key, written to a private temporary file then linked into place: link() fails
 * when the file exists, so two processes starting at once (all-in-one's services, or two
 * containers sharing the volume) end up with the same key, and nobody reads a half-written file.
 */
async function createKeyFileOnce(dataDir: string, path: string): Promise<void> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const temporary = join(dataDir, `.${DATA_DIR_KEY_FILE}.${randomUUID()}`);
  const content =
    "# matoolkit secrets key (AES-256-GCM), first line current, later lines previous keys. Keep it private.\n" +
    `${randomBytes(32).toString("base64")}\n`;
  await writeFile(temporary, content, { mode: 0o600, flag: "wx" });
  try {
    await link(temporary, path);
  } catch (error) {
    if ((error as { code?: string }).code !== "EEXIST") throw error;
  } finally {
    await unlink(temporary);
  }
}

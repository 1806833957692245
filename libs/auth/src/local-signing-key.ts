import { randomUUID } from "node:crypto";
import { link, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK } from "jose";
import type { CryptoKey, JWK } from "jose";
import { z } from "zod";

export const localSigningAlgorithm = "ES256";

const storedKeySchema = z.object({
  kty: z.literal("EC"),
  crv: z.literal("P-256"),
  x: z.string().min(1),
  y: z.string().min(1),
  d: z.string().min(1),
  kid: z.string().min(1),
  alg: z.literal(localSigningAlgorithm),
});

export interface LocalSigningKey {
  readonly kid: string;
  readonly alg: typeof localSigningAlgorithm;
  readonly privateKey: CryptoKey;
  /** Public half only (no `d`): what the API trusts. */
  readonly publicJwk: JWK;
}

export function localSigningKeyPath(dataDir: string): string {
  return path.join(dataDir, "auth", "signing-key.json");
}

/**
 * Loads the embedded-mode signing key, generating it on first use. Several processes may start
 * at once (server + token CLI), so creation must leave exactly one key that all of them agree on.
 */
export async function loadOrCreateLocalSigningKey(dataDir: string): Promise<LocalSigningKey> {
  const file = localSigningKeyPath(dataDir);
  const existing = await readIfPresent(file);
  if (existing !== undefined) return toSigningKey(existing, file);
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  await publishOnce(file, JSON.stringify(await generateStoredKey(), null, 2));
  // Re-read rather than trust what we generated: a concurrent process may have won the race.
  const winner = await readIfPresent(file);
  if (winner === undefined) throw new Error(`Signing key ${file} disappeared while being created`);
  return toSigningKey(winner, file);
}

async function generateStoredKey(): Promise<z.infer<typeof storedKeySchema>> {
  const { privateKey } = await generateKeyPair(localSigningAlgorithm, { extractable: true });
  const jwk = await exportJWK(privateKey);
  const kid = await calculateJwkThumbprint(jwk);
  return storedKeySchema.parse({ ...jwk, kid, alg: localSigningAlgorithm });
}

/**
 * Writes a temp file (0600) and hard-links it into place: unlike rename, link fails if the target
 * exists, so the first writer wins and nobody overwrites a key another process already handed out.
 */
async function publishOnce(file: string, contents: string): Promise<void> {
  const temp = `${file}.${process.pid}.${randomUUID()}.tmp`;
  await writeFile(temp, contents, { mode: 0o600, flag: "wx" });
  try {
    await link(temp, file);
  } catch (error) {
    if (errorCode(error) === "EEXIST") return;
    // Filesystems without hard links: fall back to rename (last writer wins, callers re-read).
    if (!["EPERM", "ENOTSUP", "ENOSYS", "EOPNOTSUPP"].includes(errorCode(error) ?? "")) throw error;
    await rename(temp, file);
  } finally {
    await rm(temp, { force: true });
  }
}

async function readIfPresent(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    if (errorCode(error) === "ENOENT") return undefined;
    throw error;
  }
}

async function toSigningKey(raw: string, file: string): Promise<LocalSigningKey> {
  let stored: z.infer<typeof storedKeySchema>;
  try {
    stored = storedKeySchema.parse(JSON.parse(raw));
  } catch {
    // Never include the file contents: they are the private key.
    throw new Error(`Signing key ${file} is not a valid ES256 private JWK; delete it to generate a new one`);
  }
  const { d: _d, ...publicJwk } = stored;
  const privateKey = await importJWK(stored, localSigningAlgorithm);
  if (privateKey instanceof Uint8Array) throw new Error(`Signing key ${file} is not an asymmetric key`);
  return { kid: stored.kid, alg: localSigningAlgorithm, privateKey, publicJwk };
}

function errorCode(error: unknown): string | undefined {
  return typeof error === "object" && error !== null && "code" in error ? String(error.code) : undefined;
}

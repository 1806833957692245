import { createHash } from "node:crypto";
import { SecretKeyring, secretKeyOf, secretKeyWithId, type SecretKey } from "./secret-keyring.ts";

/** An enabled version of the Key Vault secret that holds the secrets key, listed and read. */
export interface KeyVaultKeyVersion {
  readonly version: string;
  /** Key Vault's `created` attribute (whole seconds). */
  readonly createdOn: Date;
  /** Created by a matoolkit service's first start (the tag below), not by an operator's rotation. */
  readonly bootstrap: boolean;
  readonly value: string;
}

/** The tag the admin API puts on the version it creates when the secret does not exist. */
export const bootstrapTag = { name: "matoolkit-created-by", value: "first-start" } as const;

/**
 * The key id of a version: its first 16 hex digits (Key Vault versions are 32 hex digits), so a
 * sealed value `v1:<keyId>:…` names the version that opens it (`az keyvault secret list-versions`).
 * Anything else is hashed, never refused: the id only has to be stable and 16 hex digits.
 */
export function keyIdOfVersion(version: string): string {
  const lower = version.toLowerCase();
  if (/^[0-9a-f]{16,}$/u.test(lower)) return lower.slice(0, 16);
  return createHash("sha256").update(version).digest("hex").slice(0, 16);
}

/** Oldest first; same second: by version, so every process orders alike. */
function olderFirst(a: KeyVaultKeyVersion, b: KeyVaultKeyVersion): number {
  return (
    a.createdOn.getTime() - b.createdOn.getTime() ||
    (a.version < b.version ? -1 : a.version > b.version ? 1 : 0)
  );
}

/**
 * The current version: the newest enabled one (a rotation is a new version), except that of
 * several first-start versions (two admin API replicas that both found no secret and both
 * created one) only the oldest may be current. Every process that has seen the first version to
 * land then agrees on it, whichever replica re-read first; the others stay readable keys.
 */
export function currentVersionOf(versions: readonly KeyVaultKeyVersion[]): KeyVaultKeyVersion | undefined {
  const sorted = [...versions].sort(olderFirst);
  const firstStart = sorted.find((version) => version.bootstrap);
  const candidates = sorted.filter((version) => !version.bootstrap || version === firstStart);
  return candidates.at(-1);
}

/**
 * The keyring of every enabled version. Each key is also known under its content id (the one
 * MATOOLKIT_SECRETS_KEY gives it), so values sealed before the key moved into Key Vault still open.
 * Errors name the vault, secret and version, never a value.
 */
export function keyringOfVersions(versions: readonly KeyVaultKeyVersion[], label: string): SecretKeyring {
  const current = currentVersionOf(versions);
  if (current === undefined) throw new Error(`${label}: has no enabled version`);
  const keyOf = (version: KeyVaultKeyVersion): Buffer => {
    const text = version.value.trim();
    const bytes = Buffer.from(text, "base64");
    if (bytes.length !== 32 || !/^[A-Za-z0-9+/_-]+={0,2}$/u.test(text)) {
      throw new Error(
        `${label}: version ${version.version} must be 32 random bytes in base64 (openssl rand -base64 32)`,
      );
    }
    return bytes;
  };
  const keys = new Map(versions.map((version) => [version, keyOf(version)]));
  const previous: SecretKey[] = [];
  for (const [version, key] of keys) {
    if (version !== current) previous.push(secretKeyWithId(key, keyIdOfVersion(version.version)));
    previous.push(secretKeyOf(key));
  }
  return new SecretKeyring(secretKeyWithId(keys.get(current)!, keyIdOfVersion(current.version)), previous);
}

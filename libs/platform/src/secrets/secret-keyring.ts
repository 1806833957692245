import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

/**
 * Secrets at rest (webhook signing secrets): AES-256-GCM from node:crypto, a random 96-bit IV
 * per value, the 128-bit tag kept, the key id stored with the ciphertext so keys can rotate:
 *
 *   v1:<keyId>:<iv>:<tag>:<ciphertext>     (base64url parts)
 *
 * `v1:<keyId>` is also the GCM additional data, so neither can be edited without the tag failing.
 * The key id is the first 16 hex digits of the key's SHA-256: it names a key without a registry
 * of ids and reveals nothing usable about a 256-bit random key.
 */
export interface SecretKey {
  readonly id: string;
  readonly key: Buffer;
}

const VERSION = "v1";
const IV_BYTES = 12;
const TAG_BYTES = 16;

export function secretKeyOf(key: Buffer): SecretKey {
  return secretKeyWithId(key, createHash("sha256").update(key).digest("hex").slice(0, 16));
}

/**
 * A key under an id of the caller's choosing (16 lowercase hex digits, as sealed values carry):
 * Key Vault keys are named after their secret version, so a sealed value names the version.
 */
export function secretKeyWithId(key: Buffer, id: string): SecretKey {
  if (key.length !== 32) throw new Error(`a secrets key must be 32 bytes (got ${key.length})`);
  if (!/^[0-9a-f]{16}$/u.test(id)) throw new Error("a secrets key id must be 16 lowercase hex digits");
  return { id, key };
}

export class UnknownSecretKeyError extends Error {
  override readonly name = "UnknownSecretKeyError";
  constructor(readonly keyId: string) {
    super(
      `the secret was encrypted with key id ${keyId}, which this process does not know: ` +
        "configure that key as a previous key (see the secrets key settings) to read it",
    );
  }
}

/** Several keys known (the current one and previous ones); new values use the current one. */
export class SecretKeyring {
  private keys: { readonly current: SecretKey; readonly byId: ReadonlyMap<string, SecretKey> };
  private unknownKeyListener: ((keyId: string) => void) | undefined;

  constructor(current: SecretKey, previous: readonly SecretKey[] = []) {
    this.keys = { current, byId: new Map([...previous, current].map((key) => [key.id, key])) };
  }

  get current(): SecretKey {
    return this.keys.current;
  }

  private get byId(): ReadonlyMap<string, SecretKey> {
    return this.keys.byId;
  }

  /** Takes the keys of a fresh load of the same source (refresh-keyring.ts), in place. */
  replaceKeys(other: SecretKeyring): void {
    this.keys = other.keys;
  }

  /** Told of each unknown key id open() meets (the orchestrator reloads its keys then). */
  onUnknownKey(listener: (keyId: string) => void): void {
    this.unknownKeyListener = listener;
  }

  get keyIds(): readonly string[] {
    return [...this.byId.keys()];
  }

  seal(plain: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.current.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(`${VERSION}:${this.current.id}`));
    const ciphertext = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
    const parts = [iv, cipher.getAuthTag(), ciphertext].map((part) => part.toString("base64url"));
    return [VERSION, this.current.id, ...parts].join(":");
  }

  /** The clear value; throws naming the key id when it is unknown, or when the value is not sealed. */
  open(sealed: string): string {
    const parsed = parseSealed(sealed);
    if (parsed === undefined) throw new Error("the value is not an encrypted secret (v1 format)");
    const key = this.byId.get(parsed.keyId);
    if (key === undefined) {
      this.unknownKeyListener?.(parsed.keyId);
      throw new UnknownSecretKeyError(parsed.keyId);
    }
    const decipher = createDecipheriv("aes-256-gcm", key.key, parsed.iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(`${VERSION}:${parsed.keyId}`));
    decipher.setAuthTag(parsed.tag);
    try {
      return Buffer.concat([decipher.update(parsed.ciphertext), decipher.final()]).toString("utf8");
    } catch {
      throw new Error(`the secret encrypted with key id ${parsed.keyId} failed its integrity check`);
    }
  }

  /** Whether a stored value is already sealed with the current key (else it needs sealing again). */
  isCurrent(stored: string): boolean {
    return parseSealed(stored)?.keyId === this.current.id;
  }
}

/** The key id of a sealed value; undefined for anything else (a clear value from before 0012). */
export function sealedKeyId(stored: string): string | undefined {
  return parseSealed(stored)?.keyId;
}

function parseSealed(stored: string) {
  const parts = stored.split(":");
  if (parts.length !== 5 || parts[0] !== VERSION || !/^[0-9a-f]{16}$/u.test(parts[1]!)) return undefined;
  const [iv, tag, ciphertext] = parts.slice(2).map((part) => Buffer.from(part, "base64url"));
  if (iv!.length !== IV_BYTES || tag!.length !== TAG_BYTES) return undefined;
  return { keyId: parts[1]!, iv: iv!, tag: tag!, ciphertext: ciphertext! };
}

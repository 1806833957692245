import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { SecretKeyring, UnknownSecretKeyError, sealedKeyId, secretKeyOf } from "./secret-keyring.ts";

const key = () => secretKeyOf(randomBytes(32));

describe("SecretKeyring", () => {
  it("seals with a fresh IV each time, in the v1 format, and opens what it sealed", () => {
    const keyring = new SecretKeyring(key());
    const first = keyring.seal("signing-secret");
    const second = keyring.seal("signing-secret");
    expect(first).not.toBe(second);
    expect(first).toMatch(/^v1:[0-9a-f]{16}:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]{22}:[A-Za-z0-9_-]+$/u);
    expect(first).not.toContain("signing-secret");
    expect(sealedKeyId(first)).toBe(keyring.current.id);
    expect(keyring.open(first)).toBe("signing-secret");
    expect(keyring.open(second)).toBe("signing-secret");
  });

  it("opens values of a previous key, seals with the current one", () => {
    const old = key();
    const sealedWithOld = new SecretKeyring(old).seal("s1");
    const rotated = new SecretKeyring(key(), [old]);
    expect(rotated.open(sealedWithOld)).toBe("s1");
    expect(rotated.isCurrent(sealedWithOld)).toBe(false);
    expect(rotated.isCurrent(rotated.seal("s1"))).toBe(true);
  });

  it("fails naming the key id, never the secret, when the key is unknown", () => {
    const sealed = new SecretKeyring(key()).seal("the-secret-value");
    const other = new SecretKeyring(key());
    expect(() => other.open(sealed)).toThrow(UnknownSecretKeyError);
    expect(() => other.open(sealed)).toThrow(`key id ${sealedKeyId(sealed)}`);
  });

  it("refuses a tampered value, a clear value, and a key of the wrong size", () => {
    const keyring = new SecretKeyring(key());
    const parts = keyring.seal("secret").split(":");
    const ciphertext = Buffer.from(parts[4]!, "base64url");
    ciphertext[0] = ciphertext[0]! ^ 1;
    parts[4] = ciphertext.toString("base64url");
    expect(() => keyring.open(parts.join(":"))).toThrow("failed its integrity check");
    expect(() => keyring.open("wV0MxYNBKsClnO2SVWluoR73scZlu3KNROzsY")).toThrow("not an encrypted secret");
    expect(() => secretKeyOf(randomBytes(16))).toThrow("must be 32 bytes");
  });
});

import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  currentVersionOf,
  keyIdOfVersion,
  keyringOfVersions,
  type KeyVaultKeyVersion,
} from "./key-vault-versions.ts";
import { SecretKeyring, secretKeyOf } from "./secret-keyring.ts";

const version = (
  id: string,
  second: number,
  bootstrap: boolean,
  value = randomBytes(32).toString("base64"),
) => ({ version: id, createdOn: new Date(second * 1000), bootstrap, value }) satisfies KeyVaultKeyVersion;

describe("which Key Vault version seals", () => {
  it("is the newest; of several first-start versions only the oldest, whatever order they are listed in", () => {
    const first = version("b".repeat(32), 100, true);
    const racing = version("a".repeat(32), 101, true);
    expect(currentVersionOf([racing, first])).toBe(first);
    const rotated = version("c".repeat(32), 200, false);
    expect(currentVersionOf([rotated, racing, first])).toBe(rotated);
    // The same second (Key Vault's `created` has whole seconds): every process breaks the tie alike.
    const tie = version("0".repeat(32), 100, true);
    expect(currentVersionOf([first, tie])).toBe(currentVersionOf([tie, first]));
  });

  it("names each key after its version, and still opens values sealed under the key's content id", () => {
    const value = randomBytes(32);
    const moved = version("4387e9f3d6e14c459867679a90fd0f79", 100, false, value.toString("base64"));
    const keyring = keyringOfVersions([moved], "test");
    expect(keyring.current.id).toBe("4387e9f3d6e14c45");
    expect(keyIdOfVersion("not-hex")).toMatch(/^[0-9a-f]{16}$/u);
    // Sealed while the same key was MATOOLKIT_SECRETS_KEY (its id is the key's hash).
    const before = new SecretKeyring(secretKeyOf(value)).seal("kept");
    expect(keyring.open(before)).toBe("kept");
    expect(keyring.isCurrent(before)).toBe(false);
  });
});

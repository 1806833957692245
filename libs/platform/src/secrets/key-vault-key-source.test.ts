import { randomBytes } from "node:crypto";
import { Writable } from "node:stream";
import type { AccessToken, TokenCredential } from "@azure/identity";
import { createLogger } from "@matoolkit/runtime";
import {
  startKeyVaultSimulator,
  type KeyVaultSimulator,
  type KeyVaultSimulatorOptions,
} from "@matoolkit/testing";
import { afterEach, describe, expect, it, vi } from "vitest";
import { loadKeyVaultKeyring, type KeyVaultAccess, type KeyVaultKeySource } from "./key-vault-key-source.ts";
import { keyIdOfVersion } from "./key-vault-versions.ts";
import { reloadOnUnknownKey } from "./refresh-keyring.ts";
import { SecretKeyring, secretKeyOf, UnknownSecretKeyError } from "./secret-keyring.ts";

/**
 * The Key Vault key source through the real @azure/keyvault-secrets SDK against the loopback
 * simulator (@matoolkit/testing). Identity is not under test: a fake TokenCredential hands out
 * the token the simulator maps to a role.
 *
 * The loopback URL: the SDK checks that the challenge's resource (https://vault.azure.net, as a
 * real vault sends it) is the domain of the vault URL, so a token for vault.azure.net never goes
 * to another host. 127.0.0.1 is not under vault.azure.net, and reaching it under such a name
 * would need DNS and TLS interception; the tests turn that one check off
 * (disableChallengeResourceVerification) and allow plain http, and the last test shows the check
 * is live: without the option the SDK refuses the simulator's challenge and never asks for a token.
 */
const secretName = "matoolkit-secrets-key";
const loopbackOptions = {
  allowInsecureConnection: true,
  disableChallengeResourceVerification: true,
  retryOptions: { maxRetries: 0 },
};

let vault: KeyVaultSimulator | undefined;
afterEach(async () => {
  await vault?.close();
  vault = undefined;
});

async function startVault(options: Partial<KeyVaultSimulatorOptions> = {}): Promise<KeyVaultSimulator> {
  let now = 1_790_000_000;
  vault = await startKeyVaultSimulator({
    identities: new Map([
      ["admin-1", "Key Vault Secrets Officer"],
      ["admin-2", "Key Vault Secrets Officer"],
      ["orchestrator", "Key Vault Secrets User"],
    ]),
    pageSize: 2,
    clock: () => (now += 5),
    ...options,
  });
  return vault;
}

const scopesAsked: string[][] = [];
function credential(token: string): TokenCredential {
  return {
    getToken: async (scopes): Promise<AccessToken> => {
      scopesAsked.push([scopes].flat());
      return { token, expiresOnTimestamp: Date.now() + 3_600_000 };
    },
  };
}

const source = (): KeyVaultKeySource => ({ kind: "key-vault", vaultUrl: vault!.url, secretName });
const admin = (token = "admin-1", extra: Partial<KeyVaultAccess> = {}): KeyVaultAccess => ({
  mayCreate: true,
  credential: credential(token),
  clientOptions: loopbackOptions,
  attempts: 2,
  retryDelayMs: 10,
  ...extra,
});
const reader = (extra: Partial<KeyVaultAccess> = {}): KeyVaultAccess => ({
  ...admin("orchestrator"),
  mayCreate: false,
  ...extra,
});
const failureOf = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: Error) => error,
  );

describe("the secrets key in Key Vault", () => {
  it("is created by the admin API's first start (challenge, then the versions) and read the same by every later start", async () => {
    await startVault();
    const first = await loadKeyVaultKeyring(source(), admin());
    const versions = vault!.store.versions(secretName)!;
    expect(versions).toHaveLength(1);
    expect(first.current.id).toBe(keyIdOfVersion(versions[0]!.version));
    // The SDK's handshake: the first request carries no token and gets the challenge.
    expect(vault!.requests[0]).toMatchObject({ authorization: undefined });
    expect(vault!.requests.slice(1).every((request) => request.authorization === "Bearer admin-1")).toBe(
      true,
    );
    expect(vault!.requests.every((request) => request.apiVersion !== null)).toBe(true);
    expect(scopesAsked.at(-1)).toEqual(["https://vault.azure.net/.default"]);

    const sealed = first.seal("webhook-signing-secret");
    const again = await loadKeyVaultKeyring(source(), admin());
    const orchestrator = await loadKeyVaultKeyring(source(), reader());
    expect(vault!.store.versions(secretName)).toHaveLength(1);
    expect(again.current.id).toBe(first.current.id);
    expect(orchestrator.open(sealed)).toBe("webhook-signing-secret");
    expect(vault!.requests.filter((request) => request.method === "PUT")).toHaveLength(1);
  });

  it("after a rotation (a new version) seals with the new key and still opens values of the old ones, across pages", async () => {
    await startVault();
    const before = await loadKeyVaultKeyring(source(), admin());
    const sealedBefore = before.seal("old-secret");
    const rotations = [1, 2, 3, 4].map(() =>
      vault!.store.set(secretName, { value: randomBytes(32).toString("base64") }),
    );
    const after = await loadKeyVaultKeyring(source(), reader());
    expect(after.current.id).toBe(keyIdOfVersion(rotations.at(-1)!.version));
    expect(after.open(sealedBefore)).toBe("old-secret");
    expect(after.isCurrent(sealedBefore)).toBe(false);
    expect(after.isCurrent(after.seal("new-secret"))).toBe(true);
    // Five versions on pages of two: every one was listed and read.
    for (const version of vault!.store.versions(secretName)!) {
      expect(after.keyIds).toContain(keyIdOfVersion(version.version));
    }
  });

  it("an orchestrator started before a rotation reloads when a value names the new version, at most once a minute", async () => {
    await startVault();
    await loadKeyVaultKeyring(source(), admin());
    const orchestrator = await loadKeyVaultKeyring(source(), reader());
    let now = 0;
    let reloads = 0;
    reloadOnUnknownKey(
      orchestrator,
      () => ((reloads += 1), loadKeyVaultKeyring(source(), reader({ attempts: 1 }))),
      { logger: createLogger({ level: "silent", name: "test" }), now: () => now },
    );
    vault!.store.set(secretName, { value: randomBytes(32).toString("base64") });
    const rotatedAdmin = await loadKeyVaultKeyring(source(), admin());
    const sealed = rotatedAdmin.seal("after-rotation");
    // The delivery attempt that meets the new key fails (and is retried); the reload runs meanwhile.
    expect(() => orchestrator.open(sealed)).toThrow(UnknownSecretKeyError);
    expect(() => orchestrator.open(sealed)).toThrow(UnknownSecretKeyError);
    await vi.waitFor(() => expect(orchestrator.current.id).toBe(rotatedAdmin.current.id));
    expect(orchestrator.open(sealed)).toBe("after-rotation");
    expect(reloads).toBe(1);
    // A value of a key nobody has: one reload a minute, not one per attempt.
    const stranger = new SecretKeyring(secretKeyOf(randomBytes(32))).seal("x");
    expect(() => orchestrator.open(stranger)).toThrow(UnknownSecretKeyError);
    expect(reloads).toBe(1);
    now += 60_000;
    expect(() => orchestrator.open(stranger)).toThrow(UnknownSecretKeyError);
    expect(reloads).toBe(2);
  });

  it("never seals with a disabled version, and creates nothing over a secret whose versions are all disabled", async () => {
    await startVault();
    const older = vault!.store.set(secretName, { value: Buffer.alloc(32, 1).toString("base64") });
    const newer = vault!.store.set(secretName, { value: Buffer.alloc(32, 2).toString("base64") });
    vault!.store.setEnabled(secretName, newer.version, false);
    const keyring = await loadKeyVaultKeyring(source(), admin());
    expect(keyring.current.id).toBe(keyIdOfVersion(older.version));
    expect(keyring.keyIds).not.toContain(keyIdOfVersion(newer.version));

    vault!.store.setEnabled(secretName, older.version, false);
    const error = await failureOf(loadKeyVaultKeyring(source(), admin()));
    expect(error?.message).toBe(
      `Key Vault secret ${secretName} in ${vault!.url}: every version is disabled: enable one, or add a new version (az keyvault secret set)`,
    );
    expect(vault!.store.versions(secretName)).toHaveLength(2);
  });

  it("two admin API replicas creating at once agree on one key, and both versions stay readable", async () => {
    // Worst order: both find no secret; replica 1 creates and re-reads before replica 2's version lands.
    let listsWhileAbsent = 0;
    let bothListed!: () => void;
    const listed = new Promise<void>((resolve) => (bothListed = resolve));
    let firstDone!: () => void;
    const firstLoaded = new Promise<void>((resolve) => (firstDone = resolve));
    await startVault({
      beforeOperation: async (operation, name, token) => {
        if (operation === "list" && vault!.store.versions(name) === undefined) {
          if ((listsWhileAbsent += 1) === 2) bothListed();
          await listed;
        }
        if (operation === "set" && token === "admin-2") await firstLoaded;
      },
    });
    const one = loadKeyVaultKeyring(source(), admin("admin-1")).finally(firstDone);
    const two = loadKeyVaultKeyring(source(), admin("admin-2"));
    const [replica1, replica2] = await Promise.all([one, two]);
    const versions = vault!.store.versions(secretName)!;
    expect(versions).toHaveLength(2);
    expect(replica2.current.id).toBe(replica1.current.id);
    const orchestrator = await loadKeyVaultKeyring(source(), reader());
    expect(orchestrator.current.id).toBe(replica1.current.id);
    for (const version of versions) expect(orchestrator.keyIds).toContain(keyIdOfVersion(version.version));
    expect(orchestrator.open(replica1.seal("from-1"))).toBe("from-1");
    expect(orchestrator.open(replica2.seal("from-2"))).toBe("from-2");
  });

  it.each([["404"], ["empty"]] as const)(
    "a reader never creates the secret: it waits, then names the vault and secret (absent versions answered %s)",
    async (absentSecretVersions) => {
      await startVault({ absentSecretVersions });
      const error = await failureOf(loadKeyVaultKeyring(source(), reader()));
      expect(error?.message).toBe(
        `Key Vault secret ${secretName} in ${vault!.url}: it does not exist (yet): the admin API creates it on its first start, or add one with az keyvault secret set`,
      );
      expect(vault!.store.versions(secretName)).toBeUndefined();
      expect(vault!.requests.some((request) => request.method === "PUT")).toBe(false);

      // Waiting: the admin API creates it while the reader retries.
      const waiting = loadKeyVaultKeyring(source(), reader({ attempts: 200, retryDelayMs: 20 }));
      const created = await loadKeyVaultKeyring(source(), admin());
      expect((await waiting).current.id).toBe(created.current.id);
    },
  );

  it("says which role is missing when the vault refuses, and puts no key in errors or logs", async () => {
    await startVault();
    const lines: string[] = [];
    const logger = createLogger({
      level: "debug",
      name: "test",
      destination: new Writable({ write: (chunk, _encoding, done) => done(void lines.push(String(chunk))) }),
    });
    // The admin API's identity with only Secrets User: it may not create the secret.
    const refused = await failureOf(loadKeyVaultKeyring(source(), { ...admin("orchestrator"), logger }));
    expect(refused?.message).toBe(
      `Key Vault secret ${secretName} in ${vault!.url}: access refused (HTTP 403 Forbidden): this identity needs Key Vault Secrets Officer on the vault (a new role assignment takes minutes)`,
    );
    await loadKeyVaultKeyring(source(), { ...admin(), logger });
    const malformed = vault!.store.set(secretName, { value: "bm90LWEta2V5" });
    const bad = await failureOf(loadKeyVaultKeyring(source(), { ...reader(), logger }));
    expect(bad?.message).toBe(
      `Key Vault secret ${secretName} in ${vault!.url}: version ${malformed.version} must be 32 random bytes in base64 (openssl rand -base64 32)`,
    );
    expect(lines.join("")).toContain("did not exist; created its first version");
    const text = [refused?.message, bad?.message, ...lines].join("\n");
    for (const version of vault!.store.versions(secretName)!) expect(text).not.toContain(version.value);
  });

  it("with the SDK's challenge check on, refuses a vault outside vault.azure.net before asking for a token", async () => {
    await startVault();
    scopesAsked.length = 0;
    const error = await failureOf(
      loadKeyVaultKeyring(source(), admin("admin-1", { clientOptions: { allowInsecureConnection: true } })),
    );
    expect(error?.message).toMatch(
      new RegExp(
        `^Key Vault secret ${secretName} in .*: no answer from the vault \\(The challenge resource 'vault.azure.net' does not match the requested domain`,
      ),
    );
    expect(scopesAsked).toEqual([]);
    expect(vault!.requests.every((request) => request.authorization === undefined)).toBe(true);
  });
});

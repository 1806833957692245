import { randomBytes } from "node:crypto";
import type { TokenCredential } from "@azure/identity";
import type { SecretClient, SecretClientOptions } from "@azure/keyvault-secrets";
import type { Logger } from "@matoolkit/runtime";
import {
  bootstrapTag,
  keyIdOfVersion,
  keyringOfVersions,
  type KeyVaultKeyVersion,
} from "./key-vault-versions.ts";
import { explain, problemOf, type Problem } from "./key-vault-problems.ts";
import type { SecretKeyring } from "./secret-keyring.ts";

/** The secrets key as every enabled version of one Key Vault secret (secrets-config.ts). */
export interface KeyVaultKeySource {
  readonly kind: "key-vault";
  readonly vaultUrl: string;
  readonly secretName: string;
}

/** How this process reaches the vault; chosen by the service (compose.ts), not by the operator. */
export interface KeyVaultAccess {
  /** The admin API (Key Vault Secrets Officer) creates a missing secret; readers wait for it. */
  readonly mayCreate: boolean;
  /** The process's own identity (managed identity on Azure). */
  readonly credential: TokenCredential;
  /** Tests only: the loopback simulator (plain http, see key-vault-key-source.test.ts). */
  readonly clientOptions?: SecretClientOptions;
  /** Tries while the secret is missing (readers) or access is refused (RBAC not yet in effect). */
  readonly attempts?: number;
  readonly retryDelayMs?: number;
  readonly logger?: Logger;
}

type Read = { readonly versions: KeyVaultKeyVersion[] } | Problem;

/**
 * Lists the secret's versions and reads each enabled one (a disabled version cannot be read:
 * Key Vault answers 403, and a disabled key must not seal). A missing secret is created once by
 * a process that may, then read again: two replicas racing both create a version, and both keys
 * stay in everyone's keyring (key-vault-versions.ts picks the same current one).
 */
export async function loadKeyVaultKeyring(
  source: KeyVaultKeySource,
  access: KeyVaultAccess,
): Promise<SecretKeyring> {
  const { SecretClient } = await import("@azure/keyvault-secrets");
  const client = new SecretClient(source.vaultUrl, access.credential, access.clientOptions);
  const label = `Key Vault secret ${source.secretName} in ${source.vaultUrl}`;
  const attempts = access.attempts ?? 24;
  let last: Problem = { problem: "absent", detail: "" };
  for (let attempt = 1; attempt <= attempts; attempt += 1) {
    let read = await readVersions(client, source.secretName, label);
    if (access.mayCreate && "problem" in read && read.problem === "absent") {
      read =
        (await createFirstVersion(client, source.secretName, label, access.logger)) ??
        (await readVersions(client, source.secretName, label));
    }
    if ("versions" in read) return keyringOfVersions(read.versions, label);
    last = read;
    // Every version disabled is an operator's decision: creating a key over it would hide it.
    if (read.problem === "disabled" || attempt === attempts) break;
    access.logger?.warn({ attempt, attempts }, `${label}: ${explain(read, access.mayCreate)}; trying again`);
    await new Promise((resolve) => setTimeout(resolve, access.retryDelayMs ?? 5_000));
  }
  throw new Error(`${label}: ${explain(last, access.mayCreate)}`);
}

async function readVersions(client: SecretClient, name: string, label: string): Promise<Read> {
  try {
    let listedAny = false;
    const listed: Array<{ version: string; createdOn: Date; bootstrap: boolean }> = [];
    for await (const properties of client.listPropertiesOfSecretVersions(name)) {
      listedAny = true;
      if (properties.enabled !== true || properties.version === undefined) continue;
      listed.push({
        version: properties.version,
        createdOn: properties.createdOn ?? new Date(0),
        bootstrap: properties.tags?.[bootstrapTag.name] === bootstrapTag.value,
      });
    }
    // A secret that does not exist lists as 404 (below) or, should the service say so, as nothing.
    if (!listedAny) return { problem: "absent", detail: "no version" };
    if (listed.length === 0) return { problem: "disabled", detail: "no enabled version" };
    const versions: KeyVaultKeyVersion[] = [];
    for (const item of listed) {
      const secret = await client.getSecret(name, { version: item.version });
      versions.push({ ...item, value: secret.value ?? "" });
    }
    return { versions };
  } catch (error) {
    return problemOf(error, label);
  }
}

/** Creates the first version (32 random bytes); a refusal is returned, as a read's would be. */
async function createFirstVersion(
  client: SecretClient,
  name: string,
  label: string,
  logger?: Logger,
): Promise<Problem | undefined> {
  try {
    const created = await client.setSecret(name, randomBytes(32).toString("base64"), {
      contentType: "base64: AES-256-GCM key of matoolkit's webhook secrets",
      tags: { [bootstrapTag.name]: bootstrapTag.value },
    });
    logger?.info(
      { keyId: keyIdOfVersion(created.properties.version ?? "") },
      `${label}: did not exist; created its first version`,
    );
    return undefined;
  } catch (error) {
    return problemOf(error, label);
  }
}

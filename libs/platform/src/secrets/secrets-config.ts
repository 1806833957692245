import { z } from "zod";
import { azureCredentialPlanFromEnv } from "../azure-credential-plan.ts";
import { lazyAzureCredential } from "../azure-credential.ts";
import type { KeyVaultAccess } from "./key-vault-key-source.ts";
import type { SecretKeySource } from "./secret-key-source.ts";

export const secretsEnvNames = {
  key: "MATOOLKIT_SECRETS_KEY",
  previousKeys: "MATOOLKIT_SECRETS_PREVIOUS_KEYS",
  keyFile: "MATOOLKIT_SECRETS_KEY_FILE",
  keyVaultUrl: "MATOOLKIT_SECRETS_KEYVAULT_URL",
  keyVaultSecret: "MATOOLKIT_SECRETS_KEYVAULT_SECRET",
} as const;
const names = secretsEnvNames;

export const defaultKeyVaultSecretName = "matoolkit-secrets-key";

// Key Vault: https only (tokens travel with each request); secret names per "Set Secret" (the
// REST reference's pattern ^[0-9a-zA-Z-]+$) and the 127-character limit of Key Vault object names.
const vaultUrlSchema = z.url({
  protocol: /^https$/u,
  error: `${names.keyVaultUrl}: must be an https:// URL`,
});
const secretNameSchema = z
  .string()
  .regex(/^[0-9a-zA-Z-]{1,127}$/u, `${names.keyVaultSecret}: letters, digits and hyphens, 127 at most`);

/**
 * For entry points: MATOOLKIT_SECRETS_KEY (base64, with MATOOLKIT_SECRETS_PREVIOUS_KEYS comma-
 * separated during a rotation), MATOOLKIT_SECRETS_KEY_FILE, or MATOOLKIT_SECRETS_KEYVAULT_URL
 * (with MATOOLKIT_SECRETS_KEYVAULT_SECRET, default matoolkit-secrets-key); none: a key file in
 * the data directory, created on first start. Two at once are refused (which would win is a guess).
 */
export function secretKeySourceFromEnv(
  env: Record<string, string | undefined>,
  dataDir: string,
): SecretKeySource {
  const read = (name: string) => env[name]?.trim() || undefined;
  const key = read(names.key);
  const file = read(names.keyFile);
  const vaultUrl = read(names.keyVaultUrl);
  const secretName = read(names.keyVaultSecret);
  const previous = (env[names.previousKeys] ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
  const chosen = [key && names.key, file && names.keyFile, vaultUrl && names.keyVaultUrl].filter(Boolean);
  if (chosen.length > 1) throw new Error(`set only one of ${chosen.join(", ")}`);
  if (previous.length > 0 && key === undefined) {
    throw new Error(
      `${names.previousKeys} needs ${names.key} (a key file lists previous keys on its later lines, Key Vault keeps versions)`,
    );
  }
  if (secretName !== undefined && vaultUrl === undefined) {
    throw new Error(`${names.keyVaultSecret} needs ${names.keyVaultUrl}`);
  }
  if (key !== undefined) return { kind: "inline", current: key, previous };
  if (file !== undefined) return { kind: "file", path: file };
  if (vaultUrl !== undefined) {
    const url = vaultUrlSchema.safeParse(vaultUrl);
    if (!url.success) throw new Error(`${names.keyVaultUrl}: must be an https:// URL`);
    const name = secretNameSchema.safeParse(secretName ?? defaultKeyVaultSecretName);
    if (!name.success) throw new Error(name.error.issues[0]!.message);
    return { kind: "key-vault", vaultUrl: url.data.replace(/\/+$/u, ""), secretName: name.data };
  }
  return { kind: "data-dir", dataDir };
}

/**
 * For entry points whose source is `key-vault`: the process's own Azure identity (the policy of
 * MATOOLKIT_AZURE_CREDENTIAL / AZURE_CLIENT_ID, built on first use). `mayCreate`: the admin API
 * creates a missing secret; every other service only reads it.
 */
export function keyVaultAccessFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  source: SecretKeySource,
  options: { readonly mayCreate: boolean },
): KeyVaultAccess | undefined {
  if (source.kind !== "key-vault") return undefined;
  return { mayCreate: options.mayCreate, credential: lazyAzureCredential(azureCredentialPlanFromEnv(env)) };
}

import type { Logger } from "@matoolkit/runtime";
import type { KeyVaultAccess } from "./key-vault-key-source.ts";
import { loadSecretKeyring, type SecretKeySource } from "./secret-key-source.ts";
import type { SecretKeyring } from "./secret-keyring.ts";
import { secretsEnvNames } from "./secrets-config.ts";

/**
 * Loads the secrets key at a service's start and logs which one (its id, never the key). The
 * data directory's key file is right for one process or the embedded database; against a shared
 * DATABASE_URL, services in separate containers must share it, hence the warning.
 */
export async function loadSecretsAtStart(
  source: SecretKeySource,
  options: { readonly sharedDatabase: boolean; readonly logger: Logger; readonly keyVault?: KeyVaultAccess },
): Promise<SecretKeyring> {
  const keyVault =
    options.keyVault === undefined ? undefined : { logger: options.logger, ...options.keyVault };
  const keyring = await loadSecretKeyring(source, keyVault);
  options.logger.info(
    // Every id this process opens (a Key Vault key also answers to its content id), never a key.
    { keyId: keyring.current.id, keyIds: keyring.keyIds, source: source.kind },
    "secrets key loaded",
  );
  if (source.kind === "data-dir" && options.sharedDatabase) {
    options.logger.warn(
      { keyId: keyring.current.id },
      `the secrets key is the data directory's file: services in separate containers must share it ` +
        `(one volume) or get ${secretsEnvNames.key}, ${secretsEnvNames.keyFile} or ${secretsEnvNames.keyVaultUrl}`,
    );
  }
  return keyring;
}

import type { Logger } from "@matoolkit/runtime";
import type { SecretKeyring } from "./secret-keyring.ts";

export interface KeyringRefreshOptions {
  /** At most one reload in this interval, however many values name unknown keys. */
  readonly minIntervalMs?: number;
  readonly logger: Logger;
  readonly now?: () => number;
}

/**
 * Reloads the keyring (in place) when a value names a key id it does not know, at most once a
 * minute and never two at once. For the orchestrator with a key source that can change under it
 * (a Key Vault secret gaining a version, a mounted key file): a webhook secret that the admin API
 * sealed with a key this process has not loaded yet fails one delivery attempt, which is retried
 * (notifier.ts) and then finds the key, instead of failing until a restart.
 */
export function reloadOnUnknownKey(
  keyring: SecretKeyring,
  reload: () => Promise<SecretKeyring>,
  options: KeyringRefreshOptions,
): void {
  const now = options.now ?? Date.now;
  const interval = options.minIntervalMs ?? 60_000;
  let last = Number.NEGATIVE_INFINITY;
  let inFlight = false;
  keyring.onUnknownKey((keyId) => {
    if (inFlight || now() - last < interval) return;
    last = now();
    inFlight = true;
    void reload()
      .then((fresh) => {
        keyring.replaceKeys(fresh);
        options.logger.info(
          {
            unknownKeyId: keyId,
            keyId: fresh.current.id,
            keys: fresh.keyIds.length,
            known: fresh.keyIds.includes(keyId),
          },
          "secrets key reloaded: a stored value named a key this process had not loaded",
        );
      })
      .catch((error: unknown) => {
        options.logger.warn(
          { unknownKeyId: keyId, reason: error instanceof Error ? error.message : String(error) },
          "secrets key reload failed; the keys loaded at start stay in use",
        );
      })
      .finally(() => {
        inFlight = false;
      });
  });
}

import { listStoredWebhookSecrets, replaceStoredWebhookSecret, type Db } from "@matoolkit/db";
import type { Logger } from "@matoolkit/runtime";
import { sealedKeyId, UnknownSecretKeyError, type SecretKeyring } from "./secret-keyring.ts";

export interface SealingReport {
  /** Rows stored in clear (from before migration 0012), now sealed. */
  readonly sealedClear: number;
  /** Rows sealed with a previous key, now sealed with the current one (a rotation). */
  readonly resealed: number;
  /** Rows sealed with a key this process does not know: left as they are, named in the log. */
  readonly unknownKey: number;
}

/**
 * The admin API's start-up step (it writes the secrets; the orchestrator only reads them, and
 * only checks its key, below): seals webhook secrets still in
 * clear and re-seals those of a previous key with the current one, row by row, each update
 * guarded by the value read (two services starting together do the work once). Deleted
 * webhooks' secrets too: nothing stays in clear. Never logs a secret, only ids and key ids.
 */
export async function sealWebhookSecrets(
  db: Db,
  keyring: SecretKeyring,
  logger: Logger,
): Promise<SealingReport> {
  let sealedClear = 0;
  let resealed = 0;
  let unknownKey = 0;
  for (const row of await listStoredWebhookSecrets(db)) {
    if (keyring.isCurrent(row.secret)) continue;
    const keyId = sealedKeyId(row.secret);
    let plain: string;
    try {
      plain = keyId === undefined ? row.secret : keyring.open(row.secret);
    } catch (error) {
      if (!(error instanceof UnknownSecretKeyError)) throw error;
      unknownKey += 1;
      logger.error(
        { webhookId: row.id, keyId },
        "webhook secret sealed with an unknown key: its deliveries will fail",
      );
      continue;
    }
    const changed = await replaceStoredWebhookSecret(db, {
      id: row.id,
      from: row.secret,
      to: keyring.seal(plain),
    });
    if (!changed) continue;
    if (keyId === undefined) sealedClear += 1;
    else resealed += 1;
  }
  if (sealedClear + resealed > 0) {
    logger.info(
      { sealedClear, resealed, keyId: keyring.current.id },
      "webhook secrets sealed with the current key",
    );
  }
  return { sealedClear, resealed, unknownKey };
}

/**
 * The key ids of stored secrets this process cannot open: logged at the orchestrator's start (a
 * service whose key differs from the admin API's would otherwise fail each delivery silently).
 */
export async function unknownWebhookSecretKeyIds(db: Db, keyring: SecretKeyring): Promise<string[]> {
  const known = new Set(keyring.keyIds);
  const ids = (await listStoredWebhookSecrets(db)).map((row) => sealedKeyId(row.secret));
  return [...new Set(ids.filter((id): id is string => id !== undefined && !known.has(id)))];
}

import type { AccessToken, TokenCredential } from "@azure/identity";
import type { DatabasePassword } from "@matoolkit/db";
import { MatoolkitError } from "@matoolkit/domain";

/** The audience of Azure Database for PostgreSQL (Flexible Server) Microsoft Entra tokens. */
export const postgresEntraScope = "https://ossrdbms-aad.database.windows.net/.default";

export interface EntraDatabasePasswordOptions {
  /** Ask for a new token this long before the cached one expires (default 5 minutes). */
  readonly refreshBeforeExpiryMs?: number;
  readonly now?: () => number;
}

/**
 * Passwordless PostgreSQL (`DATABASE_AUTH=entra`): each new connection presents a Microsoft
 * Entra access token of the service's managed identity as its password, as spec 000's services
 * do. Tokens last about an hour and are only checked at login, so open connections outlive
 * them; a new connection after the refresh point gets a fresh token. Concurrent connections
 * share one token request. The token never reaches a log: a failure is reported with a stable
 * reason code and the credential's sanitized message.
 */
export function entraDatabasePassword(
  credential: TokenCredential,
  options: EntraDatabasePasswordOptions = {},
): DatabasePassword {
  const refreshBeforeExpiryMs = options.refreshBeforeExpiryMs ?? 5 * 60_000;
  const now = options.now ?? Date.now;
  let cached: AccessToken | undefined;
  let pending: Promise<AccessToken> | undefined;

  const fetchToken = async (): Promise<AccessToken> => {
    let token: AccessToken | null;
    try {
      token = await credential.getToken(postgresEntraScope);
    } catch (error) {
      throw new MatoolkitError(
        "database.auth_failed",
        `no Microsoft Entra token for PostgreSQL: ${error instanceof Error ? error.name : "unknown error"}`,
      );
    }
    if (token === null) {
      throw new MatoolkitError("database.auth_failed", "the credential returned no token for PostgreSQL");
    }
    return token;
  };

  return async () => {
    if (cached !== undefined && cached.expiresOnTimestamp - refreshBeforeExpiryMs > now()) {
      return cached.token;
    }
    pending ??= fetchToken().finally(() => {
      pending = undefined;
    });
    cached = await pending;
    return cached.token;
  };
}

import { access } from "node:fs/promises";
import { issueLocalToken, localAuthConfigSchema, localSigningKeyPath } from "@matoolkit/auth";
import type { AppRole } from "@matoolkit/auth";
import { CliError, exitCodes } from "../errors.ts";
import type { TokenSource } from "./token-source.ts";

/** Short-lived: the token is a bearer credential; a new one is signed when this one runs out. */
export const LOCAL_TOKEN_TTL_SECONDS = 600;
const RENEW_BEFORE_EXPIRY_MS = 60_000;

export interface LocalTokenOptions {
  readonly dataDir: string;
  readonly role: AppRole;
  readonly now: () => Date;
}

/** The identity the API records as actor, as `npm run token -- --role <role>` names it. */
export function localIdentity(role: AppRole): string {
  return `local-${role.toLowerCase()}`;
}

/**
 * Embedded mode: signs tokens with the server's local key exactly as `npm run token` does (same
 * issuer, audience and claims). The key must already exist: signing with a fresh key would only
 * earn a 401 from a server that never saw it.
 */
export function localTokenSource(options: LocalTokenOptions): TokenSource {
  let cached: { token: string; expiresAt: number } | undefined;
  return {
    async token() {
      const now = options.now();
      if (cached !== undefined && cached.expiresAt - now.getTime() > RENEW_BEFORE_EXPIRY_MS)
        return cached.token;
      await requireLocalKey(options.dataDir);
      const config = localAuthConfigSchema.parse({ mode: "local", dataDir: options.dataDir });
      const token = await issueLocalToken({
        dataDir: config.dataDir,
        issuer: config.issuer,
        audience: config.audience,
        roles: [options.role],
        name: localIdentity(options.role),
        ttlSeconds: LOCAL_TOKEN_TTL_SECONDS,
        now,
      });
      cached = { token, expiresAt: now.getTime() + LOCAL_TOKEN_TTL_SECONDS * 1000 };
      return token;
    },
  };
}

export async function localKeyExists(dataDir: string): Promise<boolean> {
  try {
    await access(localSigningKeyPath(dataDir));
    return true;
  } catch {
    return false;
  }
}

/** Fails with the key file's path and how to get one (start the server, or point data-dir at it). */
export async function requireLocalKey(dataDir: string): Promise<void> {
  if (await localKeyExists(dataDir)) return;
  throw new CliError(
    exitCodes.failed,
    "auth.local_key_missing",
    `no local signing key at ${localSigningKeyPath(dataDir)}: start the server first (npm start, which ` +
      "creates it), or point --data-dir / MATOOLKIT_DATA_DIR at the server's data directory",
  );
}

import type { AuthConfig, EntraAuthConfig } from "./auth-config.ts";
import { assertEntraAccessToken } from "./entra-access-token.ts";
import type { JwksRefreshFailure } from "./jwks-cache.ts";
import { entraIssuer, entraKeySource, localKeySource } from "./key-source.ts";
import { loadOrCreateLocalSigningKey } from "./local-signing-key.ts";
import { createTokenVerifier } from "./verify-token.ts";
import type { TokenVerifier } from "./verify-token.ts";

/** The one logger method the verifier needs (a pino Logger fits). */
export interface WarningLogger {
  warn(details: object, message: string): void;
}

export interface CreateVerifierOptions {
  /** Tests point the Entra key source at a local JWKS server. */
  readonly entraJwksUrl?: URL;
  /** Receives Entra key refresh failures; without it they go to stderr. */
  readonly logger?: WarningLogger;
  /** Clock of the Entra key cache, for tests. */
  readonly now?: () => number;
}

/** Wires the configured key source and expected issuer/audience into the one token verifier. */
export async function createVerifierForConfig(
  config: AuthConfig,
  options: CreateVerifierOptions = {},
): Promise<TokenVerifier> {
  switch (config.mode) {
    case "local": {
      // Creating the key here (not lazily) means the token CLI and server agree from the first start.
      const key = await loadOrCreateLocalSigningKey(config.dataDir);
      return createTokenVerifier(localKeySource(key.publicJwk), {
        issuer: config.issuer,
        audience: config.audience,
      });
    }
    case "entra": {
      const logger = options.logger ?? stderrLogger;
      const keySource = entraKeySource({
        instance: config.instance,
        tenantId: config.tenantId,
        ...(options.entraJwksUrl ? { jwksUrl: options.entraJwksUrl } : {}),
        ...(options.now ? { now: options.now } : {}),
        onRefreshFailure: (failure: JwksRefreshFailure) =>
          logger.warn(
            {
              jwksUrl: failure.jwksUrl,
              reason: failure.reason,
              servingCachedKeys: failure.servingCachedKeys,
            },
            failure.servingCachedKeys
              ? "Entra ID signing keys could not be refreshed; still using the last keys fetched"
              : "Entra ID signing keys could not be refreshed; requests answer 503 until they can",
          ),
      });
      return createTokenVerifier(keySource, {
        issuer: entraIssuers(config),
        audience: entraAudiences(config),
        acceptedScopes: config.scopes,
        // Entra signs ID tokens too, with the same keys, issuer and (v2.0) audience.
        assertTokenKind: assertEntraAccessToken,
      });
    }
    default: {
      const unreachable: never = config;
      throw new Error(`Unknown auth mode ${String((unreachable as { mode: unknown }).mode)}`);
    }
  }
}

/** An app registration issues v1.0 tokens unless its manifest asks for v2.0: accept both. */
export function entraIssuers(config: EntraAuthConfig): string[] {
  return [entraIssuer(config.instance, config.tenantId), config.v1Issuer];
}

/**
 * v2.0 tokens always carry the client id as `aud`; v1.0 tokens carry whatever resource the client
 * asked for (usually the Application ID URI). Accept both, as Microsoft.Identity.Web does.
 */
export function entraAudiences(config: EntraAuthConfig): string[] {
  return config.audience === config.clientId ? [config.clientId] : [config.clientId, config.audience];
}

const stderrLogger: WarningLogger = {
  warn: (details, message) => {
    process.stderr.write(`${JSON.stringify({ level: "warn", msg: message, ...details })}\n`);
  },
};

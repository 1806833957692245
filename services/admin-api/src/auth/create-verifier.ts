import type { AuthConfig } from "./auth-config.ts";
import { entraIssuer, entraKeySource, localKeySource } from "./key-source.ts";
import { loadOrCreateLocalSigningKey } from "./local-signing-key.ts";
import { createTokenVerifier } from "./verify-token.ts";
import type { TokenVerifier } from "./verify-token.ts";

export interface CreateVerifierOptions {
  /** Tests point the Entra key source at a local JWKS server. */
  readonly entraJwksUrl?: URL;
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
      const keySource = entraKeySource({
        instance: config.instance,
        tenantId: config.tenantId,
        ...(options.entraJwksUrl ? { jwksUrl: options.entraJwksUrl } : {}),
      });
      return createTokenVerifier(keySource, {
        issuer: entraIssuer(config.instance, config.tenantId),
        audience: entraAudiences(config.audience),
      });
    }
    default: {
      const unreachable: never = config;
      throw new Error(`Unknown auth mode ${String((unreachable as { mode: unknown }).mode)}`);
    }
  }
}

/**
 * v2.0 access tokens carry the bare client id as `aud`, while the spec configures the Application
 * ID URI `api://{client-id}`; accept both, as Microsoft.Identity.Web does.
 */
export function entraAudiences(audience: string): string[] {
  const clientId = /^api:\/\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\/?$/i.exec(
    audience,
  )?.[1];
  return clientId === undefined ? [audience] : [audience, clientId];
}

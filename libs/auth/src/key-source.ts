import { createLocalJWKSet } from "jose";
import type { JWK, JWTVerifyGetKey } from "jose";
import { KeySourceUnavailableError } from "./auth-error.ts";
import { createJwksCache } from "./jwks-cache.ts";
import type { JwksRefreshFailure } from "./jwks-cache.ts";
import { localSigningAlgorithm } from "./local-signing-key.ts";

export { KeySourceUnavailableError };

/**
 * Where verification keys come from. The verifier is identical for every source; a source only
 * says which keys to trust and which algorithms those keys may be used with.
 */
export interface VerificationKeySource {
  readonly kind: "local" | "entra";
  /** Asymmetric algorithms only: never `none`, never HS* (a public key must not double as a secret). */
  readonly algorithms: readonly string[];
  readonly getKey: JWTVerifyGetKey;
}

/** Trusts exactly the public half of the embedded-mode signing key. */
export function localKeySource(publicJwk: JWK): VerificationKeySource {
  return {
    kind: "local",
    algorithms: [localSigningAlgorithm],
    getKey: createLocalJWKSet({ keys: [publicJwk] }),
  };
}

export interface EntraKeySourceOptions {
  readonly instance: string;
  readonly tenantId: string;
  /** Override for tests; defaults to the tenant's discovery v2.0 JWKS endpoint. */
  readonly jwksUrl?: URL;
  readonly onRefreshFailure: (failure: JwksRefreshFailure) => void;
  /** Clock of the key cache, for tests. */
  readonly now?: () => number;
}

/** The tenant's signing keys; v1.0 and v2.0 tokens are signed with the same keys. */
export function entraJwksUrl(instance: string, tenantId: string): URL {
  return new URL(`${instance}${tenantId}/discovery/v2.0/keys`);
}

/** The `iss` of v2.0 access tokens issued by the tenant (v1.0 ones: see EntraAuthConfig.v1Issuer). */
export function entraIssuer(instance: string, tenantId: string): string {
  return `${instance}${tenantId}/v2.0`;
}

/** Trusts the tenant's published signing keys, kept a day and refetched when an unknown kid shows up. */
export function entraKeySource(options: EntraKeySourceOptions): VerificationKeySource {
  return {
    kind: "entra",
    // Entra ID signs access tokens with RS256 only.
    algorithms: ["RS256"],
    getKey: createJwksCache({
      url: options.jwksUrl ?? entraJwksUrl(options.instance, options.tenantId),
      onRefreshFailure: options.onRefreshFailure,
      ...(options.now ? { now: options.now } : {}),
    }),
  };
}

import { createLocalJWKSet, createRemoteJWKSet, errors } from "jose";
import type { JWK, JWTVerifyGetKey } from "jose";
import { localSigningAlgorithm } from "./local-signing-key.ts";

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

/** Thrown by a key source that cannot reach its keys: a server-side outage, not a bad token. */
export class KeySourceUnavailableError extends Error {
  constructor(options?: { cause?: unknown }) {
    super("Token signing keys are unavailable", options);
    this.name = "KeySourceUnavailableError";
  }
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
}

export function entraJwksUrl(instance: string, tenantId: string): URL {
  return new URL(`${instance}${tenantId}/discovery/v2.0/keys`);
}

/** The `iss` of v2.0 access tokens issued by the tenant. */
export function entraIssuer(instance: string, tenantId: string): string {
  return `${instance}${tenantId}/v2.0`;
}

/** Trusts the tenant's published signing keys (fetched, cached and rotated by jose). */
export function entraKeySource(options: EntraKeySourceOptions): VerificationKeySource {
  const jwks = createRemoteJWKSet(options.jwksUrl ?? entraJwksUrl(options.instance, options.tenantId));
  return {
    kind: "entra",
    // Entra ID signs access tokens with RS256 only.
    algorithms: ["RS256"],
    getKey: async (header, token) => {
      try {
        return await jwks(header, token);
      } catch (error) {
        // An unknown kid or a disallowed algorithm is the token's fault; anything else (network,
        // non-200, unparsable JWKS) means we could not check the token at all.
        if (error instanceof errors.JWKSNoMatchingKey) throw error;
        if (error instanceof errors.JWKSMultipleMatchingKeys) throw error;
        if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported)
          throw error;
        throw new KeySourceUnavailableError({ cause: error });
      }
    },
  };
}

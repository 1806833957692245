import { errors, jwtVerify } from "jose";
import type { JWTHeaderParameters, JWTPayload, JWTVerifyResult } from "jose";
import { AuthError } from "./auth-error.ts";
import { KeySourceUnavailableError } from "./key-source.ts";
import type { VerificationKeySource } from "./key-source.ts";
import { identityFromClaims, principalClaimsSchema } from "./principal.ts";
import type { Principal } from "./principal.ts";

export interface TokenExpectations {
  /** Accepted `iss` values; more than one only when one authority issues under several names. */
  readonly issuer: string | readonly string[];
  /** Accepted `aud` values. */
  readonly audience: string | readonly string[];
  /** Allowed clock skew between us and the issuer, in seconds. */
  readonly clockToleranceSeconds?: number;
  /**
   * Delegated scopes of this API that grant access (AZURE_AD_SCOPES). When set, a delegated token
   * (one with `scp`) must carry one of them, as Microsoft.Identity.Web's scope check demands.
   */
  readonly acceptedScopes?: readonly string[];
  /**
   * Checks the kind of token once its signature, issuer, audience and lifetime hold; throws an
   * {@link AuthError} for a token of another kind (Entra mode: access tokens only, never an ID
   * token; entra-access-token.ts).
   */
  readonly assertTokenKind?: (header: JWTHeaderParameters, payload: JWTPayload) => void;
}

export interface TokenVerifier {
  /** Resolves to the caller, or rejects with an {@link AuthError}. */
  verify(token: string): Promise<Principal>;
}

const defaultClockToleranceSeconds = 60;

/** The one validation path for every key source (local signing key or Entra ID JWKS). */
export function createTokenVerifier(
  keySource: VerificationKeySource,
  expected: TokenExpectations,
): TokenVerifier {
  const options = {
    issuer: toList(expected.issuer),
    audience: toList(expected.audience),
    algorithms: [...keySource.algorithms],
    clockTolerance: expected.clockToleranceSeconds ?? defaultClockToleranceSeconds,
    // A token without an expiry would be valid forever.
    requiredClaims: ["exp", "sub"],
  };
  const acceptedScopes = expected.acceptedScopes ?? [];
  return {
    async verify(token) {
      let verified: JWTVerifyResult;
      try {
        verified = await jwtVerify(token, keySource.getKey, options);
      } catch (error) {
        throw toAuthError(error);
      }
      expected.assertTokenKind?.(verified.protectedHeader, verified.payload);
      const claims = principalClaimsSchema.safeParse(verified.payload);
      if (!claims.success) throw new AuthError("auth.unauthenticated", "Token claims are malformed");
      const { sub, roles, scp } = claims.data;
      const scopes =
        scp === undefined ? [] : scp.split(" ").filter((scope) => acceptedScopes.includes(scope));
      // Checked here, where the configured scopes are known; the middleware answers 403 for it.
      if (scp !== undefined && acceptedScopes.length > 0 && scopes.length === 0) {
        throw new AuthError(
          "auth.forbidden",
          "The token grants none of the delegated scopes this API accepts",
        );
      }
      return { subject: sub, identity: identityFromClaims(claims.data), roles, scopes };
    },
  };
}

function toList(value: string | readonly string[]): string[] {
  return typeof value === "string" ? [value] : [...value];
}

/** Maps library errors to short, fixed messages: jose's own messages can quote claim values. */
function toAuthError(error: unknown): AuthError {
  const fail = (message: string) => new AuthError("auth.unauthenticated", message, { cause: error });
  if (error instanceof KeySourceUnavailableError) {
    return new AuthError("auth.keys_unavailable", "Token signing keys are unavailable; try again later", {
      cause: error,
    });
  }
  if (error instanceof errors.JWTExpired) return fail("Token has expired");
  if (error instanceof errors.JWTClaimValidationFailed) return fail(claimMessage(error.claim));
  if (error instanceof errors.JWSSignatureVerificationFailed) return fail("Token signature is invalid");
  if (error instanceof errors.JWKSNoMatchingKey) return fail("Token is not signed by a trusted key");
  if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported) {
    return fail("Token signing algorithm is not allowed");
  }
  return fail("Token is malformed");
}

function claimMessage(claim: string): string {
  switch (claim) {
    case "iss":
      return "Token issuer is not trusted";
    case "aud":
      return "Token audience is not this API";
    case "nbf":
      return "Token is not yet valid";
    default:
      return "Token claims are invalid";
  }
}

import type { JWTHeaderParameters, JWTPayload } from "jose";
import { AuthError } from "./auth-error.ts";

/**
 * Entra ID signs ID tokens and access tokens with the same keys, under the same issuer, and a v2.0
 * ID token for the dashboard's sign-in carries this API's client id as `aud` (the SPA signs in with
 * the API's own registration) and the user's `roles`: issuer, audience and signature alone cannot
 * tell them apart. ID tokens prove a sign-in to the client; they must never authorize a call
 * (https://learn.microsoft.com/en-us/entra/identity-platform/id-tokens: "Don't use ID tokens for
 * authorization purposes"). So, after the signature, issuer, audience and expiry checks, a token is
 * accepted only with the shape of an access token
 * (https://learn.microsoft.com/en-us/entra/identity-platform/access-token-claims-reference):
 *
 * - `typ` header, when present, `JWT` (what Entra writes in both kinds) or `at+jwt` (RFC 9068);
 * - no `nonce` claim: it binds an ID token to the client's sign-in request and is in ID tokens only
 *   (https://learn.microsoft.com/en-us/entra/identity-platform/id-token-claims-reference);
 * - `ver` `1.0` or `2.0`;
 * - delegated (a user through a client): `scp`, "only included for user tokens";
 * - app-only (client credentials): `idtyp` `app` (an optional claim,
 *   https://learn.microsoft.com/en-us/entra/identity-platform/optional-claims-reference), or, without
 *   `scp`, how the client authenticated: `azpacr` in v2.0 tokens, `appidacr` in v1.0 tokens (`0`
 *   public client, `1` secret, `2` certificate). Every access token names its client (`azp`/`appid`)
 *   and carries these; an ID token names no client and never does.
 *
 * Anything else (an ID token: `nonce`, `roles`, no `scp`, no client claims) is refused with 401.
 */
const acceptedTyp = new Set(["jwt", "at+jwt", "application/at+jwt"]);
const clientAuthMethods = new Set(["0", "1", "2"]);

export function assertEntraAccessToken(header: JWTHeaderParameters, payload: JWTPayload): void {
  const refuse = (): never => {
    // A fixed message: never the token, its claims or whom it names.
    throw new AuthError("auth.unauthenticated", "Token is not an access token for this API");
  };
  if (header.typ !== undefined && !acceptedTyp.has(header.typ.toLowerCase())) refuse();
  if (payload.nonce !== undefined) refuse();
  const version = payload.ver;
  if (version !== "1.0" && version !== "2.0") refuse();
  // `idtyp` (when the registration asks for it) says `app` or `user`; nothing else is a caller.
  const idtyp = payload.idtyp;
  if (idtyp !== undefined && idtyp !== "app" && idtyp !== "user") refuse();
  if (payload.scp !== undefined) {
    // Delegated; which scopes count is verify-token.ts's check.
    if (idtyp === "app") refuse();
    return;
  }
  if (idtyp === "app") return;
  const clientAuth = version === "2.0" ? payload.azpacr : payload.appidacr;
  if (typeof clientAuth !== "string" || !clientAuthMethods.has(clientAuth)) refuse();
}

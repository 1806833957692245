// Test support: a stand-in for one Entra ID tenant's token issuance. It publishes its signing keys
// at the documented JWKS endpoint (`{instance}{tenant}/discovery/v2.0/keys`) and signs access
// tokens shaped like Entra's v1.0 and v2.0 ones (claim names from the access token claims reference).
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import type { CryptoKey, JWK, JWTPayload } from "jose";

export type EntraTokenVersion = "1.0" | "2.0";

export interface EntraAccessTokenOptions {
  readonly version: EntraTokenVersion;
  /** `aud`: the API's Application ID URI or client id. */
  readonly audience: string;
  /** Extra or overriding claims: `roles`, `scp`, `upn`, `preferred_username`… */
  readonly claims?: JWTPayload;
  /** Issue as if from another tenant: Entra signs every tenant's tokens with the same keys. */
  readonly issuingTenantId?: string;
  /** Sign with a key the tenant does not publish (forgery tests); kid defaults to the tenant's current one. */
  readonly forgedWith?: { readonly key: CryptoKey; readonly kid?: string; readonly alg?: string };
  /** The header's `typ`; Entra writes `JWT`. */
  readonly typ?: string;
}

export interface EntraIdTokenOptions {
  /** `aud`: the client the user signed in to (for the dashboard, the API's own client id). */
  readonly clientId: string;
  readonly claims?: JWTPayload;
}

export interface FakeEntraTenant {
  readonly tenantId: string;
  /** `AZURE_AD_INSTANCE` for this tenant: the JWKS server's base URL. */
  readonly instance: string;
  /** What real Entra puts in v1.0 tokens: `https://sts.windows.net/{tenant}/`. */
  readonly v1Issuer: string;
  /** JWKS requests answered so far, including failed ones. */
  jwksRequests(): number;
  /** Publishes a new signing key next to the current ones and signs with it from now on. */
  rotateKey(): Promise<void>;
  /** While down, the JWKS endpoint answers 503. */
  setJwksDown(down: boolean): void;
  /**
   * An access token; its client claims (`azp`/`azpacr` in v2.0, `appid`/`appidacr` in v1.0) say a
   * confidential client authenticated with a secret, as for an app-only token. Delegated tokens
   * add `scp` through `claims`; a claim set to `undefined` is left out.
   */
  accessToken(options: EntraAccessTokenOptions): Promise<string>;
  /**
   * A v2.0 ID token, shaped like Entra's (id-token-claims-reference): signed with the same keys,
   * issued by the same v2.0 issuer, `aud` the client id, a `nonce`, the user's `roles`, no client
   * claims and no `scp`.
   */
  idToken(options: EntraIdTokenOptions): Promise<string>;
  close(): Promise<void>;
}

interface SigningKey {
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly publicJwk: JWK;
}

async function newSigningKey(): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true });
  const kid = randomUUID();
  // Entra's keys carry `use`, `kid`, `x5t`, `n`, `e`, `x5c` and `issuer`; the verifier needs kty/n/e/kid.
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, use: "sig" } };
}

export const v1IssuerOf = (tenantId: string) => `https://sts.windows.net/${tenantId}/`;

export async function startFakeEntraTenant(): Promise<FakeEntraTenant> {
  const tenantId = randomUUID();
  const published: SigningKey[] = [await newSigningKey()];
  let jwksDown = false;
  let requests = 0;
  const server = createServer((req, res) => {
    if (req.url !== `/${tenantId}/discovery/v2.0/keys`) return void res.writeHead(404).end();
    requests += 1;
    if (jwksDown) return void res.writeHead(503).end();
    const body = JSON.stringify({ keys: published.map((key) => key.publicJwk) });
    res.writeHead(200, { "content-type": "application/json" }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const instance = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;

  return {
    tenantId,
    instance,
    v1Issuer: v1IssuerOf(tenantId),
    jwksRequests: () => requests,
    rotateKey: async () => {
      published.push(await newSigningKey());
    },
    setJwksDown: (down) => {
      jwksDown = down;
    },
    accessToken: async (options) => {
      const current = published[published.length - 1]!;
      const key = options.forgedWith?.key ?? current.privateKey;
      const kid = options.forgedWith?.kid ?? current.kid;
      const issuingTenant = options.issuingTenantId ?? tenantId;
      const now = Math.floor(Date.now() / 1000);
      const oid = "7f0e1b9c-0000-4000-8000-000000000001";
      const common = {
        aud: options.audience,
        iat: now,
        nbf: now,
        exp: now + 3600,
        tid: issuingTenant,
        oid,
        sub: oid,
      };
      const versioned =
        options.version === "1.0"
          ? { ...common, ver: "1.0", iss: v1IssuerOf(issuingTenant), appid: randomUUID(), appidacr: "1" }
          : {
              ...common,
              ver: "2.0",
              iss: `${instance}${issuingTenant}/v2.0`,
              azp: randomUUID(),
              azpacr: "1",
            };
      return new SignJWT({ ...versioned, ...options.claims })
        .setProtectedHeader({ alg: options.forgedWith?.alg ?? "RS256", kid, typ: options.typ ?? "JWT" })
        .sign(key);
    },
    idToken: async (options) => {
      const current = published[published.length - 1]!;
      const now = Math.floor(Date.now() / 1000);
      const claims = {
        ver: "2.0",
        iss: `${instance}${tenantId}/v2.0`,
        aud: options.clientId,
        iat: now,
        nbf: now,
        exp: now + 3600,
        tid: tenantId,
        oid: "7f0e1b9c-0000-4000-8000-000000000002",
        sub: "pairwise-subject-of-the-user",
        nonce: randomUUID(),
        preferred_username: "ada@contoso.test",
        name: "Ada",
        roles: ["Admin"],
        ...options.claims,
      };
      return new SignJWT(claims)
        .setProtectedHeader({ alg: "RS256", kid: current.kid, typ: "JWT" })
        .sign(current.privateKey);
    },
    close: () =>
      new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}

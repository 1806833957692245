import { randomUUID } from "node:crypto";
import { generateKeyPair } from "jose";
import type { JWTPayload } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authConfigFromEnv, createVerifierForConfig } from "@matoolkit/auth";
import { startFakeEntraTenant } from "../../test/auth/fake-entra-tenant.ts";
import type { EntraTokenVersion, FakeEntraTenant } from "../../test/auth/fake-entra-tenant.ts";
import { startProtectedTestApp } from "../../test/auth/protected-test-app.ts";
import type { ProtectedTestApp } from "../../test/auth/protected-test-app.ts";

// The auth test matrix of issue 16 in Entra mode: tokens shaped like real v1.0 and v2.0 Entra
// access tokens, checked by the production verifier behind the production middleware.
const clientId = randomUUID();
const applicationIdUri = "api://matoolkit-admin";

let tenant: FakeEntraTenant;
let app: ProtectedTestApp;
let appWithoutScopes: ProtectedTestApp;

function entraEnv(extra: Record<string, string> = {}) {
  return {
    MATOOLKIT_AUTH_MODE: "entra",
    AZURE_AD_TENANT_ID: tenant.tenantId,
    AZURE_AD_CLIENT_ID: clientId,
    AZURE_AD_AUDIENCE: applicationIdUri,
    AZURE_AD_INSTANCE: tenant.instance,
    // The fake tenant serves from 127.0.0.1, so the v1 issuer cannot be derived from the instance.
    AZURE_AD_V1_ISSUER: tenant.v1Issuer,
    ...extra,
  };
}

beforeAll(async () => {
  tenant = await startFakeEntraTenant();
  app = await startProtectedTestApp(
    await createVerifierForConfig(authConfigFromEnv(entraEnv({ AZURE_AD_SCOPES: "access_as_user" }))),
  );
  appWithoutScopes = await startProtectedTestApp(
    await createVerifierForConfig(authConfigFromEnv(entraEnv())),
  );
});

afterAll(async () => {
  await app?.close();
  await appWithoutScopes?.close();
  await tenant?.close();
});

const v2Token = (claims: JWTPayload) => tenant.accessToken({ version: "2.0", audience: clientId, claims });
const v1Token = (claims: JWTPayload) =>
  tenant.accessToken({ version: "1.0", audience: applicationIdUri, claims });

async function statusOf(target: ProtectedTestApp, method: "GET" | "POST", token: string) {
  return (await target.request(method, "/things", `Bearer ${token}`)).status;
}

/** Error bodies are RFC 9457 problems: `code` to branch on, `detail` for people. */
async function expectForbidden(response: Response) {
  expect(response.status).toBe(403);
  const { code, detail } = (await response.json()) as { code: string; detail: string };
  return { code, detail };
}

describe("Entra ID tokens: issuer and audience", () => {
  it("accepts a v1.0 token (sts.windows.net issuer, App ID URI audience) and records its upn", async () => {
    const token = await v1Token({ roles: ["Admin"], upn: "admin@contoso.test", name: "Ada Admin" });
    const response = await app.request("POST", "/things", `Bearer ${token}`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ identity: "admin@contoso.test", roles: ["Admin"] });
  });

  it("falls back to unique_name for v1.0 tokens without upn (guest users)", async () => {
    const token = await v1Token({
      roles: ["Reader"],
      unique_name: "live.com#guest@fabrikam.test",
      name: "G",
    });
    const response = await app.request("GET", "/things", `Bearer ${token}`);
    expect(await response.json()).toMatchObject({ identity: "live.com#guest@fabrikam.test" });
  });

  it("accepts a v2.0 token whose audience is the client id, even with a custom App ID URI", async () => {
    const token = await v2Token({ roles: ["Admin"], preferred_username: "ada@contoso.test" });
    const response = await app.request("POST", "/things", `Bearer ${token}`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ identity: "ada@contoso.test", roles: ["Admin"] });
  });

  it.each<[EntraTokenVersion, string]>([
    ["1.0", applicationIdUri],
    ["1.0", clientId],
    ["2.0", clientId],
    ["2.0", applicationIdUri],
  ])("accepts a v%s token for audience %s", async (version, audience) => {
    const token = await tenant.accessToken({ version, audience, claims: { roles: ["Reader"] } });
    expect(await statusOf(app, "GET", token)).toBe(200);
  });

  it.each<EntraTokenVersion>(["1.0", "2.0"])(
    "rejects a v%s token issued by another tenant",
    async (version) => {
      const token = await tenant.accessToken({
        version,
        audience: clientId,
        issuingTenantId: randomUUID(),
        claims: { roles: ["Admin"] },
      });
      const response = await app.request("GET", "/things", `Bearer ${token}`);
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({
        code: "auth.unauthenticated",
        detail: "Token issuer is not trusted",
      });
    },
  );

  it("rejects a token for another API of the tenant", async () => {
    const token = await tenant.accessToken({
      version: "2.0",
      audience: randomUUID(),
      claims: { roles: ["Admin"] },
    });
    expect(await statusOf(app, "GET", token)).toBe(401);
  });

  it("rejects a token signed by a key the tenant does not publish, or with an algorithm Entra does not use", async () => {
    const { privateKey } = await generateKeyPair("RS256");
    const forged = await tenant.accessToken({
      version: "2.0",
      audience: clientId,
      claims: { roles: ["Admin"] },
      forgedWith: { key: privateKey },
    });
    expect(await statusOf(app, "POST", forged)).toBe(401);
    const { privateKey: pssKey } = await generateKeyPair("PS256");
    const pss = await tenant.accessToken({
      version: "2.0",
      audience: clientId,
      claims: { roles: ["Admin"] },
      forgedWith: { key: pssKey, alg: "PS256" },
    });
    const response = await app.request("POST", "/things", `Bearer ${pss}`);
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ detail: "Token signing algorithm is not allowed" });
  });
});

describe("Entra ID tokens: app roles and delegated scopes", () => {
  it("refuses a role-less app-only token (any service principal of the tenant can get one)", async () => {
    const token = await v2Token({});
    const error = await expectForbidden(await app.request("GET", "/things", `Bearer ${token}`));
    expect(error).toEqual({
      code: "auth.forbidden",
      detail: "This operation requires the Reader, Operator or Admin role",
    });
    expect(await statusOf(app, "POST", token)).toBe(403);
  });

  it.each([["Reader"], ["Operator"]])("lets %s read but not write", async (role) => {
    const token = await v2Token({ roles: [role] });
    expect(await statusOf(app, "GET", token)).toBe(200);
    const error = await expectForbidden(await app.request("POST", "/things", `Bearer ${token}`));
    expect(error.detail).toBe("This operation requires the Admin role");
  });

  it("lets Admin read and write; roles this API does not define grant nothing", async () => {
    const admin = await v2Token({ roles: ["Admin"] });
    expect(await statusOf(app, "GET", admin)).toBe(200);
    expect(await statusOf(app, "POST", admin)).toBe(200);
    expect(await statusOf(app, "GET", await v2Token({ roles: ["Task.Write", "admin"] }))).toBe(403);
  });

  it("lets a delegated token with the configured scope read, and write only with the Admin role", async () => {
    const user = await v2Token({ scp: "access_as_user", preferred_username: "user@contoso.test" });
    expect(await statusOf(app, "GET", user)).toBe(200);
    expect(await statusOf(app, "POST", user)).toBe(403);
    const adminUser = await v1Token({ scp: "access_as_user", roles: ["Admin"], upn: "ada@contoso.test" });
    expect(await statusOf(app, "POST", adminUser)).toBe(200);
  });

  it("refuses a delegated token without any configured scope, whatever its roles", async () => {
    const token = await v2Token({ scp: "User.Read openid", roles: ["Admin"] });
    const error = await expectForbidden(await app.request("GET", "/things", `Bearer ${token}`));
    expect(error).toEqual({
      code: "auth.forbidden",
      detail: "The token grants none of the delegated scopes this API accepts",
    });
    expect(await statusOf(app, "POST", token)).toBe(403);
  });

  it("without AZURE_AD_SCOPES, a delegated token needs an app role to read", async () => {
    expect(await statusOf(appWithoutScopes, "GET", await v2Token({ scp: "access_as_user" }))).toBe(403);
    const reader = await v2Token({ scp: "access_as_user", roles: ["Reader"] });
    expect(await statusOf(appWithoutScopes, "GET", reader)).toBe(200);
  });

  it("treats a malformed scp or roles claim as a bad token", async () => {
    expect(await statusOf(app, "GET", await v2Token({ scp: ["access_as_user"] }))).toBe(401);
    expect(await statusOf(app, "GET", await v2Token({ roles: "Admin" }))).toBe(401);
  });
});

// Issue 25 finding 9: Entra signs ID tokens with the same keys, issuer and (v2.0) audience as
// access tokens; only an access token may call the API (entra-access-token.ts).
describe("Entra ID tokens: access tokens only", () => {
  async function expectNotAnAccessToken(token: string) {
    const response = await app.request("GET", "/things", `Bearer ${token}`);
    const text = await response.text();
    expect({ status: response.status, body: JSON.parse(text) as unknown }).toMatchObject({
      status: 401,
      body: { code: "auth.unauthenticated", detail: "Token is not an access token for this API" },
    });
    // Neither the token nor any of its parts or claims comes back.
    for (const part of token.split(".")) expect(text).not.toContain(part);
    expect(text).not.toContain("ada@contoso.test");
  }

  it("refuses an ID token: v2.0 issuer, the API's client id as audience, a nonce and the Admin role", async () => {
    await expectNotAnAccessToken(await tenant.idToken({ clientId }));
  });

  it("refuses an ID token without its nonce: no scp, no client claims", async () => {
    await expectNotAnAccessToken(await tenant.idToken({ clientId, claims: { nonce: undefined } }));
  });

  it("refuses an otherwise valid access token that carries a nonce", async () => {
    await expectNotAnAccessToken(await v2Token({ scp: "access_as_user", nonce: randomUUID() }));
    await expectNotAnAccessToken(await v1Token({ roles: ["Admin"], nonce: randomUUID() }));
  });

  it("accepts a delegated token (scp) from a public client, as the dashboard gets one", async () => {
    const token = await v2Token({
      scp: "access_as_user",
      azpacr: "0",
      preferred_username: "ada@contoso.test",
    });
    const response = await app.request("GET", "/things", `Bearer ${token}`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ identity: "ada@contoso.test", roles: [] });
  });

  it("accepts an app-only token marked idtyp=app with its roles", async () => {
    const token = await v2Token({ idtyp: "app", roles: ["Admin"], azpacr: undefined });
    expect(await statusOf(app, "POST", token)).toBe(200);
  });

  it("accepts an app-only v1.0 token by its appidacr, and a v2.0 one by its azpacr", async () => {
    expect(await statusOf(app, "POST", await v1Token({ roles: ["Admin"], appidacr: "2" }))).toBe(200);
    expect(await statusOf(app, "POST", await v2Token({ roles: ["Admin"], azpacr: "1" }))).toBe(200);
  });

  it("refuses a token without scp, idtyp=app, or the client claim of its version", async () => {
    await expectNotAnAccessToken(await v2Token({ roles: ["Admin"], azpacr: undefined }));
    await expectNotAnAccessToken(await v1Token({ roles: ["Admin"], appidacr: undefined }));
    // The other version's claim does not count.
    await expectNotAnAccessToken(await v1Token({ roles: ["Admin"], appidacr: undefined, azpacr: "1" }));
    await expectNotAnAccessToken(await v2Token({ roles: ["Admin"], azpacr: "9" }));
  });

  it("refuses contradictory or unknown token kinds: idtyp=app with scp, idtyp=device, no ver", async () => {
    await expectNotAnAccessToken(await v2Token({ scp: "access_as_user", idtyp: "app" }));
    await expectNotAnAccessToken(await v2Token({ roles: ["Admin"], idtyp: "device" }));
    await expectNotAnAccessToken(await v2Token({ roles: ["Admin"], ver: undefined }));
  });

  it("accepts the JWT and at+jwt typ headers and refuses other kinds of JWT", async () => {
    const withTyp = (typ: string) =>
      tenant.accessToken({ version: "2.0", audience: clientId, claims: { roles: ["Reader"] }, typ });
    expect(await statusOf(app, "GET", await withTyp("at+jwt"))).toBe(200);
    expect(await statusOf(app, "GET", await withTyp("JWT"))).toBe(200);
    await expectNotAnAccessToken(await withTyp("logout+jwt"));
    await expectNotAnAccessToken(await withTyp("dpop+jwt"));
  });
});

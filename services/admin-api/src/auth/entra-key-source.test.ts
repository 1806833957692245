import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, importJWK, SignJWT } from "jose";
import type { CryptoKey, JWTPayload } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createVerifierForConfig } from "./create-verifier.ts";
import { entraIssuer } from "./key-source.ts";
import { startProtectedTestApp } from "./protected-test-app.ts";
import type { ProtectedTestApp } from "./protected-test-app.ts";

// Same tiny app and verifier code as the local-key tests; only the key source and issuer differ.
const tenantId = randomUUID();
const otherTenantId = randomUUID();
const clientId = randomUUID();
const audience = `api://${clientId}`;
const kid = "entra-test-key";

let signingKey: CryptoKey;
let jwksServer: Server;
let instance: string;
let app: ProtectedTestApp;

beforeAll(async () => {
  const pair = await generateKeyPair("RS256", { extractable: true });
  signingKey = pair.privateKey;
  const jwks = { keys: [{ ...(await exportJWK(pair.publicKey)), kid, use: "sig" }] };
  // Serves the keys only at the tenant's discovery path, so a wrongly built JWKS URL fails the test.
  jwksServer = createServer((req, res) => {
    if (req.url !== `/${tenantId}/discovery/v2.0/keys`) return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(jwks));
  });
  await new Promise<void>((resolve) => jwksServer.listen(0, "127.0.0.1", resolve));
  instance = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/`;
  app = await startProtectedTestApp(
    await createVerifierForConfig({ mode: "entra", tenantId, audience, instance }),
  );
});

afterAll(async () => {
  await app.close();
  await new Promise((resolve) => jwksServer.close(resolve));
});

function entraToken(claims: JWTPayload, alg = "RS256", key: CryptoKey = signingKey) {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({
    iss: entraIssuer(instance, tenantId),
    aud: audience,
    sub: "entra-subject",
    oid: "7f0e1b9c-0000-4000-8000-000000000001",
    iat: now,
    exp: now + 600,
    ...claims,
  })
    .setProtectedHeader({ alg, kid, typ: "JWT" })
    .sign(key);
}

describe("Entra ID key source", () => {
  it("accepts a tenant-signed Admin token for this API and records the user", async () => {
    const token = await entraToken({ roles: ["Admin"], preferred_username: "admin@contoso.test" });
    const response = await app.request("POST", "/things", `Bearer ${token}`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ identity: "admin@contoso.test", roles: ["Admin"] });
  });

  it("accepts v2.0 tokens whose audience is the bare client id", async () => {
    const token = await entraToken({ aud: clientId, roles: ["Reader"] });
    expect((await app.request("GET", "/things", `Bearer ${token}`)).status).toBe(200);
    expect((await app.request("POST", "/things", `Bearer ${token}`)).status).toBe(403);
  });

  it("rejects a token issued by another tenant", async () => {
    const token = await entraToken({ iss: entraIssuer(instance, otherTenantId), roles: ["Admin"] });
    const response = await app.request("POST", "/things", `Bearer ${token}`);
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({
      error: { code: "auth.unauthenticated", message: "Token issuer is not trusted" },
    });
  });

  it("rejects a token signed by a key the tenant does not publish", async () => {
    const { privateKey: stranger } = await generateKeyPair("RS256");
    const token = await entraToken({ roles: ["Admin"] }, "RS256", stranger);
    expect((await app.request("POST", "/things", `Bearer ${token}`)).status).toBe(401);
  });

  it("rejects algorithms Entra does not use, even with a trusted key", async () => {
    // The tenant's own RSA key, re-imported for RSA-PSS: only the algorithm is wrong.
    const samePss = (await importJWK(await exportJWK(signingKey), "PS256")) as CryptoKey;
    const token = await entraToken({ roles: ["Admin"] }, "PS256", samePss);
    expect((await app.request("POST", "/things", `Bearer ${token}`)).status).toBe(401);
  });

  it("answers 503, not 401, when the signing keys cannot be fetched", async () => {
    const unreachable = await createVerifierForConfig(
      { mode: "entra", tenantId, audience, instance },
      { entraJwksUrl: new URL(`${instance}no-such-tenant/discovery/v2.0/keys`) },
    );
    const outageApp = await startProtectedTestApp(unreachable);
    try {
      const token = await entraToken({ roles: ["Admin"] });
      const response = await outageApp.request("GET", "/things", `Bearer ${token}`);
      expect(response.status).toBe(503);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
        "auth.keys_unavailable",
      );
    } finally {
      await outageApp.close();
    }
  });
});

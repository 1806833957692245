import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { base64url, SignJWT } from "jose";
import type { JWTPayload } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createVerifierForConfig, issueLocalToken, loadOrCreateLocalSigningKey } from "@matoolkit/auth";
import type { AppRole, LocalSigningKey } from "@matoolkit/auth";
import { startProtectedTestApp } from "../../test/auth/protected-test-app.ts";
import type { ProtectedTestApp } from "../../test/auth/protected-test-app.ts";

const issuer = "matoolkit-local";
const audience = "api://matoolkit";

let dataDir: string;
let otherDataDir: string;
let key: LocalSigningKey;
let otherKey: LocalSigningKey;
let app: ProtectedTestApp;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), "auth-mw-"));
  otherDataDir = await mkdtemp(path.join(tmpdir(), "auth-mw-other-"));
  key = await loadOrCreateLocalSigningKey(dataDir);
  otherKey = await loadOrCreateLocalSigningKey(otherDataDir);
  app = await startProtectedTestApp(
    await createVerifierForConfig({ mode: "local", dataDir, issuer, audience }),
  );
});

afterAll(async () => {
  await app.close();
  await rm(dataDir, { recursive: true, force: true });
  await rm(otherDataDir, { recursive: true, force: true });
});

const tokenFor = (role: AppRole, extra: { name?: string; ttlSeconds?: number; now?: Date } = {}) =>
  issueLocalToken({
    dataDir,
    issuer,
    audience,
    roles: [role],
    name: "alice@example.test",
    ttlSeconds: 600,
    ...extra,
  });

/** Signs arbitrary claims, for tokens issueLocalToken deliberately cannot produce. */
function sign(claims: JWTPayload, overrides: { signer?: LocalSigningKey; kid?: string } = {}) {
  const signer = overrides.signer ?? key;
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ sub: "user-1", iss: issuer, aud: audience, iat: now, exp: now + 600, ...claims })
    .setProtectedHeader({ alg: "ES256", kid: overrides.kid ?? signer.kid })
    .sign(signer.privateKey);
}

async function expectUnauthenticated(response: Response, token?: string) {
  expect(response.status).toBe(401);
  expect(response.headers.get("www-authenticate")).toMatch(/^Bearer error="invalid_token"/);
  const text = await response.text();
  if (token !== undefined) expect(text).not.toContain(token);
  expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  const body = JSON.parse(text) as { code: string; detail: string };
  expect(body.code).toBe("auth.unauthenticated");
  return body.detail;
}

describe("authenticate + requireRole over HTTP (local signing key)", () => {
  it("rejects a request without a token", async () => {
    expect(await expectUnauthenticated(await app.request("GET", "/things"))).toBe(
      "A bearer token is required",
    );
  });

  it.each(["Basic dXNlcjpwYXNz", "Bearer", "Bearer a b", "Token abc.def.ghi"])(
    "rejects a malformed Authorization header: %s",
    async (header) => {
      await expectUnauthenticated(await app.request("GET", "/things", header));
    },
  );

  it("rejects a token signed by another key claiming our key id", async () => {
    const forged = await sign({ roles: ["Admin"] }, { signer: otherKey, kid: key.kid });
    const message = await expectUnauthenticated(
      await app.request("POST", "/things", `Bearer ${forged}`),
      forged,
    );
    expect(message).toBe("Token signature is invalid");
  });

  it("rejects a token signed by an untrusted key", async () => {
    const foreign = await sign({ roles: ["Admin"] }, { signer: otherKey });
    await expectUnauthenticated(await app.request("POST", "/things", `Bearer ${foreign}`), foreign);
  });

  it("rejects an expired token but tolerates small clock skew", async () => {
    const expired = await tokenFor("Admin", { ttlSeconds: 600, now: new Date(Date.now() - 700_000) });
    expect(await expectUnauthenticated(await app.request("GET", "/things", `Bearer ${expired}`))).toBe(
      "Token has expired",
    );
    const justExpired = await tokenFor("Admin", { ttlSeconds: 600, now: new Date(Date.now() - 630_000) });
    expect((await app.request("GET", "/things", `Bearer ${justExpired}`)).status).toBe(200);
  });

  it("rejects a token that is not valid yet", async () => {
    const future = await sign({ nbf: Math.floor(Date.now() / 1000) + 600 });
    expect(await expectUnauthenticated(await app.request("GET", "/things", `Bearer ${future}`))).toBe(
      "Token is not yet valid",
    );
  });

  it("rejects a token from another issuer or for another audience", async () => {
    const wrongIssuer = await sign({ iss: "someone-else" });
    expect(await expectUnauthenticated(await app.request("GET", "/things", `Bearer ${wrongIssuer}`))).toBe(
      "Token issuer is not trusted",
    );
    const wrongAudience = await sign({ aud: "api://another-api" });
    expect(await expectUnauthenticated(await app.request("GET", "/things", `Bearer ${wrongAudience}`))).toBe(
      "Token audience is not this API",
    );
  });

  it("rejects an unsigned (alg: none) token", async () => {
    const encode = (value: object) => base64url.encode(JSON.stringify(value));
    const now = Math.floor(Date.now() / 1000);
    const payload = { sub: "x", iss: issuer, aud: audience, exp: now + 600, roles: ["Admin"] };
    const unsigned = `${encode({ alg: "none", typ: "JWT" })}.${encode(payload)}.`;
    await expectUnauthenticated(await app.request("POST", "/things", `Bearer ${unsigned}`), unsigned);
  });

  it("rejects an HS256 token keyed with the public key", async () => {
    const now = Math.floor(Date.now() / 1000);
    const secret = new TextEncoder().encode(JSON.stringify(key.publicJwk));
    const confused = await new SignJWT({
      sub: "x",
      iss: issuer,
      aud: audience,
      exp: now + 600,
      roles: ["Admin"],
    })
      .setProtectedHeader({ alg: "HS256", kid: key.kid })
      .sign(secret);
    const message = await expectUnauthenticated(await app.request("POST", "/things", `Bearer ${confused}`));
    expect(message).toBe("Token signing algorithm is not allowed");
  });

  it("rejects a token without an expiry", async () => {
    const forever = await new SignJWT({ sub: "x", iss: issuer, aud: audience, roles: ["Admin"] })
      .setProtectedHeader({ alg: "ES256", kid: key.kid })
      .sign(key.privateKey);
    await expectUnauthenticated(await app.request("POST", "/things", `Bearer ${forever}`));
  });

  it("lets a Reader read but not write", async () => {
    const reader = await tokenFor("Reader");
    const read = await app.request("GET", "/things", `Bearer ${reader}`);
    expect(read.status).toBe(200);
    expect(await read.json()).toEqual({ identity: "alice@example.test", roles: ["Reader"] });

    const write = await app.request("POST", "/things", `Bearer ${reader}`);
    expect(write.status).toBe(403);
    expect(await write.json()).toEqual({
      type: "/problems/auth.forbidden",
      title: "Role required",
      status: 403,
      code: "auth.forbidden",
      detail: "This operation requires the Admin role",
    });
  });

  it("refuses a valid token without any app role of this API, even for reads", async () => {
    for (const roles of [undefined, [], ["Task.Read"]]) {
      const token = await sign({ preferred_username: "carol@example.test", ...(roles ? { roles } : {}) });
      const read = await app.request("GET", "/things", `Bearer ${token}`);
      expect(read.status).toBe(403);
      expect(await read.json()).toMatchObject({
        status: 403,
        code: "auth.forbidden",
        detail: "This operation requires the Reader, Operator or Admin role",
      });
      expect((await app.request("POST", "/things", `Bearer ${token}`)).status).toBe(403);
    }
  });

  it("lets an Operator read but not write", async () => {
    const operator = await tokenFor("Operator");
    expect((await app.request("GET", "/things", `Bearer ${operator}`)).status).toBe(200);
    expect((await app.request("POST", "/things", `Bearer ${operator}`)).status).toBe(403);
  });

  it("lets an Admin write, accepting a lowercase scheme", async () => {
    const admin = await tokenFor("Admin", { name: "bob@example.test" });
    const response = await app.request("POST", "/things", `bearer ${admin}`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ identity: "bob@example.test", roles: ["Admin"] });
  });

  it.each([
    [{ preferred_username: "upn@example.test", name: "Display Name", oid: "oid-1" }, "upn@example.test"],
    [{ name: "Display Name", oid: "oid-1" }, "Display Name"],
    [{ preferred_username: "", oid: "oid-1" }, "oid-1"],
    [{}, "system"],
  ])("records the Admin's identity by the fallback chain: %o → %s", async (claims, identity) => {
    const token = await sign({ ...claims, roles: ["Admin"] });
    const response = await app.request("POST", "/things", `Bearer ${token}`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ identity, roles: ["Admin"] });
  });
});

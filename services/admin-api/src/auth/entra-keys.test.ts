import { generateKeyPair } from "jose";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { authConfigFromEnv, createVerifierForConfig } from "@matoolkit/auth";
import { startFakeEntraTenant } from "../../test/auth/fake-entra-tenant.ts";
import type { FakeEntraTenant } from "../../test/auth/fake-entra-tenant.ts";
import { startProtectedTestApp } from "../../test/auth/protected-test-app.ts";
import type { ProtectedTestApp } from "../../test/auth/protected-test-app.ts";

// How the Entra key source lives with Entra's key publication: keys are kept a day, rotation is
// picked up on an unknown kid, and a JWKS outage does not take the API down. Only Date is faked
// (the verifier, the tokens and the key cache all read it), so nothing here sleeps.
const clientId = "0f8fad5b-d9cb-469f-a165-70867728950e";
const minute = 60_000;
const hour = 60 * minute;

let tenant: FakeEntraTenant;
let app: ProtectedTestApp;
let warnings: { details: object; message: string }[];

beforeEach(async () => {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(new Date("2030-01-01T00:00:00Z"));
  warnings = [];
  tenant = await startFakeEntraTenant();
  const config = authConfigFromEnv({
    MATOOLKIT_AUTH_MODE: "entra",
    AZURE_AD_TENANT_ID: tenant.tenantId,
    AZURE_AD_CLIENT_ID: clientId,
    AZURE_AD_AUDIENCE: `api://${clientId}`,
    AZURE_AD_INSTANCE: tenant.instance,
    AZURE_AD_V1_ISSUER: tenant.v1Issuer,
  });
  const logger = { warn: (details: object, message: string) => void warnings.push({ details, message }) };
  app = await startProtectedTestApp(await createVerifierForConfig(config, { logger }));
});

afterEach(async () => {
  vi.useRealTimers();
  await app?.close();
  await tenant?.close();
});

const advance = (ms: number) => vi.setSystemTime(Date.now() + ms);

async function readWithFreshToken(): Promise<Response> {
  const token = await tenant.accessToken({
    version: "2.0",
    audience: clientId,
    claims: { roles: ["Reader"] },
  });
  return app.request("GET", "/things", `Bearer ${token}`);
}

async function forgedKidStatus(): Promise<number> {
  const { privateKey } = await generateKeyPair("RS256");
  const token = await tenant.accessToken({
    version: "2.0",
    audience: clientId,
    claims: { roles: ["Admin"] },
    forgedWith: { key: privateKey, kid: crypto.randomUUID() },
  });
  return (await app.request("GET", "/things", `Bearer ${token}`)).status;
}

describe("Entra ID signing keys", () => {
  it("fetches the tenant's keys once and keeps them for a day", async () => {
    for (const _ of [1, 2, 3]) expect((await readWithFreshToken()).status).toBe(200);
    advance(23 * hour);
    expect((await readWithFreshToken()).status).toBe(200);
    expect(tenant.jwksRequests()).toBe(1);
    advance(hour + 1000);
    expect((await readWithFreshToken()).status).toBe(200);
    expect(tenant.jwksRequests()).toBe(2);
  });

  it("accepts a token signed with a newly rotated key by refetching the keys", async () => {
    expect((await readWithFreshToken()).status).toBe(200);
    await tenant.rotateKey();
    advance(2 * minute);
    expect((await readWithFreshToken()).status).toBe(200);
    expect(tenant.jwksRequests()).toBe(2);
  });

  it("refetches for unknown key ids at most once a minute, so forged kids cannot hammer Entra", async () => {
    expect((await readWithFreshToken()).status).toBe(200);
    advance(2 * minute);
    for (const _ of [1, 2, 3, 4, 5]) expect(await forgedKidStatus()).toBe(401);
    expect(tenant.jwksRequests()).toBe(2);
    advance(45_000);
    expect(await forgedKidStatus()).toBe(401);
    expect(tenant.jwksRequests()).toBe(2);
    advance(16_000);
    expect(await forgedKidStatus()).toBe(401);
    expect(tenant.jwksRequests()).toBe(3);
  });

  it("keeps verifying with the last good keys while the JWKS endpoint fails, and warns", async () => {
    const first = await readWithFreshToken();
    expect(first.status).toBe(200);
    tenant.setJwksDown(true);
    advance(25 * hour);
    const token = await tenant.accessToken({
      version: "2.0",
      audience: clientId,
      claims: { roles: ["Reader"] },
    });
    expect((await app.request("GET", "/things", `Bearer ${token}`)).status).toBe(200);
    expect((await readWithFreshToken()).status).toBe(200);
    // One failed attempt, not one per request.
    expect(tenant.jwksRequests()).toBe(2);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.message).toMatch(/signing keys could not be refreshed/);
    expect(JSON.stringify(warnings)).not.toContain(token);
    expect(JSON.stringify(warnings)).toContain("503");

    advance(2 * minute);
    expect((await readWithFreshToken()).status).toBe(200);
    expect(tenant.jwksRequests()).toBe(3);
    tenant.setJwksDown(false);
    advance(2 * minute);
    expect((await readWithFreshToken()).status).toBe(200);
    expect(tenant.jwksRequests()).toBe(4);
    // Refreshed: the next day starts now.
    advance(23 * hour);
    expect((await readWithFreshToken()).status).toBe(200);
    expect(tenant.jwksRequests()).toBe(4);
  });

  it("answers 503 only while no keys were ever fetched", async () => {
    tenant.setJwksDown(true);
    const response = await readWithFreshToken();
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ code: "auth.keys_unavailable" });
    tenant.setJwksDown(false);
    advance(2 * minute);
    expect((await readWithFreshToken()).status).toBe(200);
  });
});

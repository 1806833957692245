import { createServer } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair } from "jose";
import type { CompactJWSHeaderParameters, FlattenedJWSInput, JWK } from "jose";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { KeySourceUnavailableError } from "./auth-error.ts";
import { createJwksCache } from "./jwks-cache.ts";
import type { JwksRefreshFailure } from "./jwks-cache.ts";

// The cache on its own, with an injected clock, against a JWKS endpoint whose answer each test sets.
let server: Server;
let url: URL;
let answer: { status: number; body: string };
let requests: number;
let clock: number;
let failures: JwksRefreshFailure[];
let publicJwk: JWK;

beforeAll(async () => {
  const { publicKey } = await generateKeyPair("RS256");
  publicJwk = { ...(await exportJWK(publicKey)), kid: "key-1", use: "sig" };
});

beforeEach(async () => {
  answer = { status: 200, body: JSON.stringify({ keys: [publicJwk] }) };
  requests = 0;
  clock = Date.UTC(2030, 0, 1);
  failures = [];
  server = createServer((_req, res) => {
    requests += 1;
    res.writeHead(answer.status, { "content-type": "application/json" }).end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/tenant/discovery/v2.0/keys`);
});

afterEach(async () => {
  await new Promise((resolve) => server.close(resolve));
});

const newCache = (target = url) =>
  createJwksCache({ url: target, now: () => clock, onRefreshFailure: (failure) => failures.push(failure) });

const header = (kid: string): CompactJWSHeaderParameters => ({ alg: "RS256", kid });
const token = {} as FlattenedJWSInput;

describe("JWKS cache", () => {
  it("shares one fetch between concurrent first requests", async () => {
    const getKey = newCache();
    const keys = await Promise.all([1, 2, 3, 4].map(() => getKey(header("key-1"), token)));
    expect(keys).toHaveLength(4);
    expect(requests).toBe(1);
  });

  it.each([
    [{ status: 500, body: "" }, "the JWKS endpoint answered HTTP 500"],
    [{ status: 200, body: "<html>" }, "the JWKS endpoint answered something other than JSON"],
    [
      { status: 200, body: JSON.stringify({ keys: [] }) },
      "the JWKS endpoint answered JSON that is not a non-empty key set",
    ],
    [
      { status: 200, body: JSON.stringify({ keys: [{ kid: "x" }] }) },
      "the JWKS endpoint answered JSON that is not a non-empty key set",
    ],
  ])("without keys, answers unavailable and reports why: %o", async (response, reason) => {
    answer = response;
    await expect(newCache()(header("key-1"), token)).rejects.toBeInstanceOf(KeySourceUnavailableError);
    expect(failures).toEqual([{ jwksUrl: url.href, reason, servingCachedKeys: false }]);
  });

  it("reports an unreachable endpoint by its network error", async () => {
    const closed = new URL(url);
    await new Promise((resolve) => server.close(resolve));
    server = createServer();
    await expect(newCache(closed)(header("key-1"), token)).rejects.toBeInstanceOf(KeySourceUnavailableError);
    expect(failures[0]?.reason).toBe("fetch failed: ECONNREFUSED");
  });

  it("retries a failed first fetch only after the cooldown", async () => {
    answer = { status: 503, body: "" };
    const getKey = newCache();
    await expect(getKey(header("key-1"), token)).rejects.toBeInstanceOf(KeySourceUnavailableError);
    answer = { status: 200, body: JSON.stringify({ keys: [publicJwk] }) };
    clock += 59_000;
    await expect(getKey(header("key-1"), token)).rejects.toBeInstanceOf(KeySourceUnavailableError);
    expect(requests).toBe(1);
    clock += 1_000;
    await expect(getKey(header("key-1"), token)).resolves.toBeDefined();
    expect(requests).toBe(2);
  });

  it("after a failed refresh, keeps the old keys and reports that it does", async () => {
    const getKey = newCache();
    await getKey(header("key-1"), token);
    answer = { status: 502, body: "" };
    clock += 24 * 60 * 60 * 1000;
    await expect(getKey(header("key-1"), token)).resolves.toBeDefined();
    expect(failures).toEqual([
      { jwksUrl: url.href, reason: "the JWKS endpoint answered HTTP 502", servingCachedKeys: true },
    ]);
  });
});

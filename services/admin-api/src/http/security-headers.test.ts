import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { createDataSourceClient } from "@matoolkit/datasources";
import { createLogger } from "@matoolkit/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiHarness, type ApiHarness } from "../../test/api-test-harness.ts";
import { createAdminApi } from "../app.ts";
import { signInConfigOf } from "@matoolkit/auth";
import { createReadiness } from "./readiness.ts";

/**
 * Issue 25 finding 5: the dashboard page carries a Content-Security-Policy that allows only the
 * server's own scripts, styles and connections (plus the Entra authority in Entra mode) and cannot
 * be framed; every other answer (the API, its errors and 404s, probes, problem pages, assets) is
 * never sniffed, never cached and may run nothing (`default-src 'none'`).
 */
let harness: ApiHarness;
let dashboardDir: string;
const servers: Server[] = [];
const logger = createLogger({ level: "silent", name: "security-headers-test" });
const tenantId = "11111111-2222-3333-4444-555555555555";
const clientId = "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee";

beforeAll(async () => {
  harness = await startApiHarness();
  dashboardDir = await mkdtemp(path.join(tmpdir(), "dashboard-dist-"));
  await mkdir(path.join(dashboardDir, "assets"));
  await writeFile(path.join(dashboardDir, "index.html"), "<!doctype html><title>dash</title>");
  await writeFile(path.join(dashboardDir, "assets", "index-abc123.js"), "console.log(1)");
  await writeFile(path.join(dashboardDir, "assets", "logo.svg"), "<svg xmlns='http://www.w3.org/2000/svg'/>");
});

afterAll(async () => {
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  await harness?.stop();
  if (dashboardDir !== undefined) await rm(dashboardDir, { recursive: true, force: true });
});

async function serve(options: Partial<Parameters<typeof createAdminApi>[0]>): Promise<string> {
  const app = createAdminApi({
    db: harness.db,
    bus: harness.runtime.bus,
    verifier: { verify: () => Promise.reject(new Error("no token accepted here")) },
    logger,
    dataSources: createDataSourceClient({ env: {}, baseDir: harness.dataDir }),
    readiness: createReadiness({ db: harness.db, busReady: Promise.resolve(), logger }),
    ...options,
  });
  const server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, "127.0.0.1", () => resolve(listening));
  });
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A CSP header as directive → sources, so assertions do not depend on order or spacing. */
function parseCsp(header: string | null): Record<string, string[]> {
  expect(header, "Content-Security-Policy").not.toBeNull();
  return Object.fromEntries(
    header!
      .split(";")
      .map((directive) => directive.trim().split(/\s+/))
      .filter((parts) => parts[0] !== "")
      .map(([name, ...sources]) => [name!, sources]),
  );
}

const dashboardPolicy = {
  "default-src": ["'self'"],
  "script-src": ["'self'"],
  "style-src": ["'self'"],
  "img-src": ["'self'", "data:"],
  "connect-src": ["'self'"],
  "object-src": ["'none'"],
  "base-uri": ["'none'"],
  "frame-ancestors": ["'none'"],
  "form-action": ["'self'"],
};
const strictPolicy = { "default-src": ["'none'"], "frame-ancestors": ["'none'"] };

function expectCommonHeaders(where: string, headers: Headers): void {
  expect(
    {
      where,
      nosniff: headers.get("x-content-type-options"),
      frame: headers.get("x-frame-options"),
      referrer: headers.get("referrer-policy"),
    },
    where,
  ).toEqual({ where, nosniff: "nosniff", frame: "DENY", referrer: "no-referrer" });
}

describe("the dashboard page's headers", () => {
  it("allows only the server's own scripts, styles and connections, and no framing (local mode)", async () => {
    const url = await serve({ dashboardDir });
    for (const page of ["/", "/batches/12", "/index.html"]) {
      const response = await fetch(`${url}${page}`);
      expect(response.status).toBe(200);
      expectCommonHeaders(page, response.headers);
      expect(parseCsp(response.headers.get("content-security-policy")), page).toEqual(dashboardPolicy);
      // Still revalidated on every load (dashboard-static.ts), not no-store.
      expect(response.headers.get("cache-control")).toBe("no-cache");
    }
  });

  it("lets the dashboard reach its tenant's Entra authority, and nothing else, in Entra mode", async () => {
    const entra = signInConfigOf({
      mode: "entra",
      tenantId,
      clientId,
      audience: `api://${clientId}`,
      instance: "https://login.microsoftonline.com/",
      v1Issuer: `https://sts.windows.net/${tenantId}/`,
      scopes: ["access_as_user"],
    });
    const url = await serve({ dashboardDir, signIn: entra });
    const policy = parseCsp((await fetch(`${url}/`)).headers.get("content-security-policy"));
    const authority = `https://login.microsoftonline.com/${tenantId}/`;
    const discovery = "https://login.microsoftonline.com/common/discovery/instance";
    expect(policy).toEqual({
      ...dashboardPolicy,
      "connect-src": ["'self'", authority, discovery],
      // MSAL's silent renewal loads the authority's authorize endpoint in a hidden iframe.
      "frame-src": [authority],
    });
  });

  it("gives the dashboard's other files the strict policy and nosniff", async () => {
    const url = await serve({ dashboardDir });
    for (const file of ["/assets/index-abc123.js", "/assets/logo.svg"]) {
      const response = await fetch(`${url}${file}`);
      expect(response.status).toBe(200);
      expectCommonHeaders(file, response.headers);
      expect(parseCsp(response.headers.get("content-security-policy")), file).toEqual(strictPolicy);
    }
  });
});

describe("every other answer's headers", () => {
  it("are never sniffed, never cached and run nothing: API answers, errors, 404s, probes, problem pages", async () => {
    const answers = {
      "200 API read": await fetch(`${harness.url}/api/runbooks`, {
        headers: { authorization: `Bearer ${harness.readerToken}` },
      }),
      "200 auth config": await fetch(`${harness.url}/api/auth/config`),
      "200 OpenAPI": await fetch(`${harness.url}/api/openapi.json`),
      "400 malformed body": await fetch(`${harness.url}/api/runbooks/none/automation`, {
        method: "PUT",
        headers: { authorization: `Bearer ${harness.adminToken}`, "content-type": "application/json" },
        body: "{not json",
      }),
      "401 no token": await fetch(`${harness.url}/api/runbooks`),
      "403 Reader write": await fetch(`${harness.url}/api/runbooks`, {
        method: "POST",
        headers: { authorization: `Bearer ${harness.readerToken}`, "content-type": "application/yaml" },
        body: "name: x\n",
      }),
      "404 API path": await fetch(`${harness.url}/api/no-such-thing`),
      "404 other path": await fetch(`${harness.url}/no-such-thing`, { method: "POST" }),
      "200 healthz": await fetch(`${harness.url}/healthz`),
      "200 problem page": await fetch(`${harness.url}/problems/resource.not_found`),
      "200 metrics": await fetch(`${harness.url}/metrics`),
    };
    const seen = Object.entries(answers).map(([what, response]) => ({
      what,
      status: response.status,
      nosniff: response.headers.get("x-content-type-options"),
      cache: response.headers.get("cache-control"),
      csp: response.headers.get("content-security-policy"),
      frame: response.headers.get("x-frame-options"),
      referrer: response.headers.get("referrer-policy"),
    }));
    expect(seen).toEqual(
      seen.map(({ what }) => ({
        what,
        status: Number(what.slice(0, 3)),
        nosniff: "nosniff",
        cache: "no-store",
        csp: "default-src 'none'; frame-ancestors 'none'",
        frame: "DENY",
        referrer: "no-referrer",
      })),
    );
  });

  it("holds for the page that says the dashboard is not built", async () => {
    const empty = await mkdtemp(path.join(tmpdir(), "dashboard-empty-"));
    try {
      const response = await fetch(`${await serve({ dashboardDir: empty })}/`);
      expect(response.status).toBe(503);
      expectCommonHeaders("unbuilt", response.headers);
      expect(parseCsp(response.headers.get("content-security-policy"))).toEqual(strictPolicy);
      expect(response.headers.get("cache-control")).toBe("no-store");
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });
});

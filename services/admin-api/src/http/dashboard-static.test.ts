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
import { findDashboardDir } from "./dashboard-static.ts";
import { createReadiness } from "./readiness.ts";

/**
 * The dashboard's files at `/` (hashed assets cached for a year, index.html revalidated, the SPA
 * fallback for other paths) never shadow the API: /api, /problems and the probes keep their own
 * answers. GET /api/auth/config tells clients how to sign in, without a token.
 */
let harness: ApiHarness;
let dashboardDir: string;
const servers: Server[] = [];
const logger = createLogger({ level: "silent", name: "dashboard-static-test" });

beforeAll(async () => {
  harness = await startApiHarness();
  dashboardDir = await mkdtemp(path.join(tmpdir(), "dashboard-dist-"));
  await mkdir(path.join(dashboardDir, "assets"));
  await writeFile(path.join(dashboardDir, "index.html"), "<!doctype html><title>dash</title>");
  await writeFile(path.join(dashboardDir, "assets", "index-abc123.js"), "console.log(1)");
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

describe("the dashboard at /", () => {
  it("serves index.html at / and for any other page path, revalidated on every load", async () => {
    const url = await serve({ dashboardDir });
    for (const page of ["/", "/batches/12", "/index.html"]) {
      const response = await fetch(`${url}${page}`);
      expect({ page, status: response.status }).toEqual({ page, status: 200 });
      expect(response.headers.get("content-type")).toMatch(/^text\/html/);
      expect(response.headers.get("cache-control")).toBe("no-cache");
      expect(await response.text()).toContain("<title>dash</title>");
    }
  });

  it("lets browsers keep hashed assets for a year, and a missing asset is a 404 (not index.html)", async () => {
    const url = await serve({ dashboardDir });
    const asset = await fetch(`${url}/assets/index-abc123.js`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    const missing = await fetch(`${url}/assets/index-gone.js`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  });

  it("never answers an API, problem or probe path with the dashboard", async () => {
    const url = await serve({ dashboardDir });
    const unknownApi = await fetch(`${url}/api/no-such-thing`);
    expect(unknownApi.status).toBe(404);
    expect(((await unknownApi.json()) as { code: string }).code).toBe("resource.not_found");
    const noToken = await fetch(`${url}/api/runbooks`);
    expect(noToken.status).toBe(401);
    expect((await fetch(`${url}/healthz`)).headers.get("content-type")).toMatch(/^application\/json/);
    const problem = await fetch(`${url}/problems/resource.not_found`);
    expect(await problem.text()).not.toContain("<title>dash</title>");
  });

  it("answers / with how to build it when there is no build, and serves nothing when turned off", async () => {
    const empty = await mkdtemp(path.join(tmpdir(), "dashboard-empty-"));
    try {
      const unbuilt = await fetch(`${await serve({ dashboardDir: empty })}/`);
      expect(unbuilt.status).toBe(503);
      expect(await unbuilt.text()).toContain("npm run build -w services/dashboard");
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
    const off = await fetch(`${await serve({ dashboardDir: false })}/`);
    expect(off.status).toBe(404);
  });

  it("finds services/dashboard/dist from a module below the repository root", async () => {
    const root = await mkdtemp(path.join(tmpdir(), "dashboard-root-"));
    try {
      const dist = path.join(root, "services", "dashboard", "dist");
      await mkdir(dist, { recursive: true });
      await mkdir(path.join(root, "dist"));
      expect(findDashboardDir(path.join(root, "dist"))).toBeUndefined();
      await writeFile(path.join(dist, "index.html"), "<!doctype html>");
      expect(findDashboardDir(path.join(root, "dist"))).toBe(dist);
      expect(findDashboardDir(path.join(root, "services", "admin-api", "src", "http"))).toBe(dist);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe("GET /api/auth/config", () => {
  it("answers local mode without a token", async () => {
    const response = await fetch(`${harness.url}/api/auth/config`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ mode: "local" });
  });

  it("names the authority, client id and full scope names in Entra mode (no secret)", async () => {
    const tenantId = "11111111-2222-3333-4444-555555555555";
    const clientId = "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee";
    const entra = {
      mode: "entra" as const,
      tenantId,
      clientId,
      audience: `api://${clientId}`,
      instance: "https://login.microsoftonline.com/",
      v1Issuer: `https://sts.windows.net/${tenantId}/`,
      scopes: ["access_as_user"],
    };
    const url = await serve({ signIn: signInConfigOf(entra), dashboardDir: false });
    const body = await (await fetch(`${url}/api/auth/config`)).json();
    expect(body).toEqual({
      mode: "entra",
      authority: `https://login.microsoftonline.com/${tenantId}`,
      tenantId,
      clientId,
      scopes: [`api://${clientId}/access_as_user`],
    });
    expect(signInConfigOf({ ...entra, scopes: [] })).toMatchObject({
      scopes: [`api://${clientId}/.default`],
    });
  });
});

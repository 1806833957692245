import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveDashboard } from "./dashboard-static.ts";

/**
 * Issue 25, finding 6: the dashboard's files are served from its build directory only. A symlink
 * in it that points out (a build step, a mount, a stray link) must not make the API a way to read
 * the server's files, such as the data directory's signing key.
 */
let base: string;
let dist: string;
let url: string;
let server: Server;

beforeAll(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), "dashboard-containment-")));
  dist = path.join(base, "dist");
  await mkdir(path.join(dist, "assets"), { recursive: true });
  await mkdir(path.join(base, "data"));
  await writeFile(path.join(dist, "index.html"), "<!doctype html><title>dash</title>");
  await writeFile(path.join(dist, "assets", "app-1.js"), "console.log(1)");
  await writeFile(path.join(base, "data", "signing-key.pem"), "PRIVATE KEY");
  await symlink(path.join(base, "data", "signing-key.pem"), path.join(dist, "key.pem"));
  await symlink(path.join(base, "data"), path.join(dist, "assets", "data"));
  await symlink(path.join(dist, "assets", "app-1.js"), path.join(dist, "assets", "app-latest.js"));
  await symlink(dist, path.join(base, "dist-link"));

  const app = express();
  app.use(serveDashboard(path.join(base, "dist-link")));
  app.use((_req, res) => void res.status(404).send("not found"));
  server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, "127.0.0.1", () => resolve(listening));
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await rm(base, { recursive: true, force: true });
});

describe("the dashboard's files stay inside its build directory", () => {
  it("never serves a file that a symlink in the build leads to outside it", async () => {
    for (const page of ["/key.pem", "/assets/data/signing-key.pem", "/assets/%64ata/signing-key.pem"]) {
      const response = await fetch(`${url}${page}`);
      expect({ page, body: await response.text() }).not.toMatchObject({ body: "PRIVATE KEY" });
    }
    // A page path falls back to index.html as for any missing file; an asset path is a 404.
    expect(await (await fetch(`${url}/key.pem`)).text()).toContain("<title>dash</title>");
    expect((await fetch(`${url}/assets/data/signing-key.pem`)).status).toBe(404);
  });

  it("still serves its own files, through a symlinked build directory and links that stay inside", async () => {
    expect(await (await fetch(`${url}/assets/app-1.js`)).text()).toBe("console.log(1)");
    expect(await (await fetch(`${url}/assets/app-latest.js`)).text()).toBe("console.log(1)");
    expect(await (await fetch(`${url}/`)).text()).toContain("<title>dash</title>");
  });
});

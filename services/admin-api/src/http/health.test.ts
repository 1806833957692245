import { createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { createDataSourceClient } from "@matoolkit/datasources";
import { createDb, type Db } from "@matoolkit/db";
import { createLogger } from "@matoolkit/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiHarness, type ApiHarness } from "../../test/api-test-harness.ts";
import { createAdminApi } from "../app.ts";
import { problemDetailsSchema } from "./problem-details.ts";
import { createReadiness } from "./readiness.ts";

/**
 * /healthz and /readyz on the admin API's port, without a token (probes carry none). Readiness
 * is 503 naming what is not ready: the database (refused, or silent past the timeout) or the bus.
 */
let harness: ApiHarness;
const logger = createLogger({ level: "silent", name: "health-test" });

beforeAll(async () => {
  harness = await startApiHarness();
});

afterAll(async () => {
  await harness?.stop();
});

const probe = async (base: string, path: "/healthz" | "/readyz") => {
  const response = await fetch(new URL(path, base));
  return { status: response.status, headers: response.headers, text: await response.text() };
};

describe("on the running API, without a token", () => {
  it("GET /healthz: 200 ok, never cached", async () => {
    const response = await probe(harness.url, "/healthz");
    expect(response.status).toBe(200);
    expect(JSON.parse(response.text)).toEqual({ status: "ok" });
    expect(response.headers.get("cache-control")).toBe("no-store");
  });

  it("GET /readyz: 200 with each check ok", async () => {
    const response = await probe(harness.url, "/readyz");
    expect(response.status).toBe(200);
    expect(JSON.parse(response.text)).toEqual({
      status: "ready",
      checks: { database: "ok", messageBus: "ok" },
    });
  });
});

/** The admin API over `db`, with the bus ready when `busReady` resolves. */
async function startApi(db: Db, busReady: Promise<unknown>, databaseTimeoutMs = 1000) {
  const app = createAdminApi({
    db,
    bus: harness.runtime.bus,
    verifier: { verify: () => Promise.reject(new Error("no token expected")) },
    logger,
    dataSources: createDataSourceClient({ env: {}, baseDir: harness.dataDir }),
    readiness: createReadiness({ db, busReady, logger, databaseTimeoutMs }),
  });
  const server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

function expectNotReady(response: { status: number; text: string }, checks: Record<string, string>) {
  expect(response.status).toBe(503);
  const problem = problemDetailsSchema.parse(JSON.parse(response.text));
  expect(problem.code).toBe("service.not_ready");
  expect(problem.checks).toEqual(checks);
  return problem;
}

describe("GET /readyz when something is not ready", () => {
  it("503 naming the database when it refuses connections, without saying where it is", async () => {
    const closed = createServer();
    const port = await listen(closed);
    await new Promise((resolve) => closed.close(resolve));
    const db = createDb({ connectionString: `postgres://probe:secret@127.0.0.1:${port}/nowhere` });
    const api = await startApi(db, Promise.resolve());
    try {
      const response = await probe(api.url, "/readyz");
      const problem = expectNotReady(response, { database: "unreachable", messageBus: "ok" });
      expect(problem.detail).toBe("not ready: database unreachable");
      for (const secret of [String(port), "secret", "probe", "nowhere"])
        expect(response.text).not.toContain(secret);
      // Liveness is about the process only: a database outage must not get it restarted.
      expect((await probe(api.url, "/healthz")).status).toBe(200);
    } finally {
      api.server.close();
      await db.destroy();
    }
  });

  it("503 within the timeout when the database accepts but never answers", async () => {
    const sockets: Socket[] = [];
    const silent = createServer((socket) => void sockets.push(socket));
    const port = await listen(silent);
    const db = createDb({ connectionString: `postgres://probe@127.0.0.1:${port}/silent` });
    const api = await startApi(db, Promise.resolve(), 200);
    try {
      const started = Date.now();
      const [first, second] = await Promise.all([probe(api.url, "/readyz"), probe(api.url, "/readyz")]);
      // Without the timeout the probes would hang on the silent socket; 5 s leaves room for a loaded machine.
      expect(Date.now() - started).toBeLessThan(5_000);
      for (const response of [first!, second!]) {
        expectNotReady(response, { database: "no answer within 200 ms", messageBus: "ok" });
      }
      // Concurrent probes share one ping: one connection attempt, not one per probe.
      expect(sockets).toHaveLength(1);
    } finally {
      api.server.close();
      for (const socket of sockets) socket.destroy();
      silent.close();
      await db.destroy().catch(() => undefined);
    }
  });

  it("503 naming the bus until it has started, then 200", async () => {
    let markStarted!: () => void;
    const busReady = new Promise<void>((resolve) => (markStarted = resolve));
    const api = await startApi(harness.db, busReady);
    try {
      expectNotReady(await probe(api.url, "/readyz"), { database: "ok", messageBus: "not started" });
      markStarted();
      await busReady;
      expect((await probe(api.url, "/readyz")).status).toBe(200);
    } finally {
      api.server.close();
    }
  });

  it("503 for good when the bus failed to start", async () => {
    const failed = Promise.reject(new Error("sidecar never answered"));
    const api = await startApi(harness.db, failed);
    await failed.catch(() => undefined);
    try {
      const response = await probe(api.url, "/readyz");
      expectNotReady(response, { database: "ok", messageBus: "failed to start" });
      expect(response.text).not.toContain("sidecar");
    } finally {
      api.server.close();
    }
  });
});

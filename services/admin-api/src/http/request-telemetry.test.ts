import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { createDataSourceClient } from "@matoolkit/datasources";
import { createLogger, createMetrics, REQUEST_ID_HEADER } from "@matoolkit/runtime";
import { parsePrometheusText, sampleValue } from "@matoolkit/runtime/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiHarness, type ApiHarness } from "../../test/api-test-harness.ts";
import { createAdminApi } from "../app.ts";
import { createReadiness } from "./readiness.ts";

/**
 * Request ids (X-Request-Id in the response, every log line and problem bodies) and the
 * Prometheus endpoint of the admin API, on an app of our own with a log we can read and
 * instruments of its own (exact counts), beside the harness (the process-wide instruments).
 */
let harness: ApiHarness;
let server: Server;
let url: string;
const lines: Array<Record<string, unknown>> = [];
const metrics = createMetrics();
const READER_TOKEN = "reader-token-for-the-member-search";

beforeAll(async () => {
  harness = await startApiHarness();
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString("utf8").split("\n")) {
        if (line.trim() !== "") lines.push(JSON.parse(line) as Record<string, unknown>);
      }
      done();
    },
  });
  const logger = createLogger({ level: "debug", name: "request-telemetry-test", destination });
  const app = createAdminApi({
    db: harness.db,
    bus: harness.runtime.bus,
    // One Reader token (the member search's log test); any other fails unexpectedly (a 500).
    verifier: {
      verify: (token) =>
        token === READER_TOKEN
          ? Promise.resolve({
              subject: "reader",
              identity: "reader@example.test",
              roles: ["Reader"],
              scopes: [],
            })
          : Promise.reject(new Error("no token accepted here")),
    },
    logger,
    dataSources: createDataSourceClient({ env: {}, baseDir: harness.dataDir }),
    readiness: createReadiness({ db: harness.db, busReady: Promise.resolve(), logger }),
    dashboardDir: false,
    metrics,
  });
  server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, "127.0.0.1", () => resolve(listening));
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await harness?.stop();
});

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/u;

async function get(path: string, headers: Record<string, string> = {}) {
  const response = await fetch(new URL(path, url), { headers });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** The log lines of one request, once its completion line is written (after the response). */
async function linesOf(requestId: string) {
  await expect
    .poll(() => lines.filter((line) => line.requestId === requestId && line.msg === "request completed"))
    .toHaveLength(1);
  return lines.filter((line) => line.requestId === requestId);
}

describe("X-Request-Id", () => {
  it("is generated when absent, returned in the header and bound to the request's log lines", async () => {
    const response = await get("/healthz");
    expect(response.status).toBe(200);
    const requestId = response.headers.get(REQUEST_ID_HEADER) ?? "";
    expect(requestId).toMatch(uuid);
    const logged = await linesOf(requestId);
    expect(logged.map((line) => [line.msg, line.route, line.status])).toEqual([
      ["request completed", "/healthz", 200],
    ]);
  });

  it("keeps a valid incoming id and replaces one that could forge log lines", async () => {
    const kept = await get("/healthz", { "X-Request-Id": "gw-4bf92f3577b34da6a3ce929d0e0e4736" });
    expect(kept.headers.get(REQUEST_ID_HEADER)).toBe("gw-4bf92f3577b34da6a3ce929d0e0e4736");
    for (const bad of ["short", "has spaces in it", "x".repeat(129), 'quote"and\\backslash']) {
      const replaced = await get("/healthz", { "X-Request-Id": bad });
      const id = replaced.headers.get(REQUEST_ID_HEADER) ?? "";
      expect({ bad, replacedBy: uuid.test(id) }).toEqual({ bad, replacedBy: true });
    }
  });

  it("is in the problem body of an error response, and in the log line of an unexpected error", async () => {
    const missing = await get("/no/such/endpoint", { "X-Request-Id": "req-0123456789abcdef" });
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.text)).toMatchObject({
      code: "resource.not_found",
      requestId: "req-0123456789abcdef",
    });

    // This app's verifier throws a plain Error: an unexpected failure, logged by the error handler.
    const failed = await get("/api/batches", { authorization: "Bearer any-token" });
    expect(failed.status).toBe(500);
    const failedId = failed.headers.get(REQUEST_ID_HEADER) ?? "";
    expect(failedId).toMatch(uuid);
    expect(JSON.parse(failed.text)).toMatchObject({ code: "unexpected.exception", requestId: failedId });
    const logged = await linesOf(failedId);
    expect(logged.map((line) => [line.msg, line.reason ?? null])).toEqual([
      ["request failed", "unexpected.exception"],
      ["request completed", null],
    ]);
  });
});

describe("GET /api/members?key= (issue 31)", () => {
  it("logs the route pattern, never the searched member key, found or refused", async () => {
    const key = "planted.person.7731@contoso.test";
    const ids: string[] = [];
    for (const path of [`/api/members?key=${key}`, `/api/members?key=${key}&limit=0`]) {
      const response = await get(path, { authorization: `Bearer ${READER_TOKEN}` });
      expect([200, 400]).toContain(response.status);
      expect(response.text).not.toContain("planted.person");
      ids.push(response.headers.get(REQUEST_ID_HEADER) ?? "");
    }
    const logged = (await Promise.all(ids.map(linesOf))).flat();
    expect(logged.map((line) => [line.route, line.status])).toEqual([
      ["/api/members", 200],
      ["/api/members", 400],
    ]);
    expect(JSON.stringify(lines)).not.toContain("planted.person");
  });
});

describe("GET /metrics", () => {
  it("serves Prometheus text without a token: latency by route pattern, never the raw URL", async () => {
    const before = parsePrometheusText((await get("/metrics")).text);
    const count = (route: string, status: string) =>
      sampleValue(before, "matoolkit_http_request_duration_seconds_count", {
        method: "GET",
        route,
        status,
      }) ?? 0;
    const healthzBefore = count("/healthz", "200");

    await get("/healthz");
    await get("/healthz");
    await get("/problems/resource.not_found");
    await get("/no/such/endpoint/4242");

    // A request is observed when its response has finished, which may be just after the client
    // has read it: scrape until the three requests are in.
    let response = await get("/metrics");
    let samples = parsePrometheusText(response.text);
    const after = (route: string, status: string) =>
      sampleValue(samples, "matoolkit_http_request_duration_seconds_count", { method: "GET", route, status });
    await expect
      .poll(async () => {
        response = await get("/metrics");
        samples = parsePrometheusText(response.text);
        return [after("/healthz", "200"), after("/problems/:code", "200"), after("unmatched", "404")];
      })
      .toEqual([healthzBefore + 2, count("/problems/:code", "200") + 1, count("unmatched", "404") + 1]);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/u);
    // Route patterns only: the raw path of the unmatched request is nowhere in the labels.
    // (Checked on the labels: a value such as a byte count may contain those digits by chance.)
    const labelValues = samples.flatMap((sample) => Object.values(sample.labels));
    expect(labelValues.filter((value) => value.includes("/no/such") || value.includes("4242"))).toEqual([]);
    // Node's default metrics are there too.
    expect(sampleValue(samples, "process_cpu_user_seconds_total")).toBeGreaterThan(0);
  });

  it("is served by the harness's API too (the process-wide instruments), counting its requests", async () => {
    const scrape = async () => {
      const response = await fetch(new URL("/metrics", harness.url));
      expect(response.status).toBe(200);
      return parsePrometheusText(await response.text());
    };
    const labels = { method: "GET", route: "/api/batches", status: "200" };
    const before = sampleValue(await scrape(), "matoolkit_http_request_duration_seconds_count", labels) ?? 0;
    expect((await harness.request("GET", "/batches", { token: harness.readerToken })).status).toBe(200);
    // Observed when the response has finished (possibly just after the client read it).
    await expect
      .poll(async () => sampleValue(await scrape(), "matoolkit_http_request_duration_seconds_count", labels))
      .toBe(before + 1);
  });
});

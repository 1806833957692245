import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../logger.ts";
import { createDaprHttp } from "./dapr-http.ts";
import { waitForSidecarSubscriptions } from "./wait-for-subscriptions.ts";

/**
 * When an app counts as ready on Dapr: after its sidecar subscribed its topics. daprd answers
 * `GET /v1.0/healthz` 500 ERR_HEALTH_NOT_READY until its initialisation (subscriptions included)
 * ends, then 204 (dapr/dapr pkg/api/http/healthz, as seen on real daprd in the drills). Only that
 * endpoint is served here, by a plain HTTP server; what daprd does on it is run on real daprd by
 * the test:dapr suites and the dapr-crash drill's `app` round.
 */
let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** A sidecar health endpoint whose answer the test switches; counts the probes. */
async function healthEndpoint(initiallyHealthy: boolean) {
  const sidecar = { healthy: initiallyHealthy, probes: 0 };
  server = createServer((request, response) => {
    if (request.url !== "/v1.0/healthz") return void response.writeHead(404).end();
    sidecar.probes += 1;
    if (sidecar.healthy) return void response.writeHead(204).end();
    response.writeHead(500, { "content-type": "application/json" });
    response.end(JSON.stringify({ errorCode: "ERR_HEALTH_NOT_READY", message: "dapr is not ready" }));
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { sidecar, http: createDaprHttp({ httpEndpoint: `http://127.0.0.1:${port}` }) };
}

const logger = createLogger({ level: "silent", name: "test" });

describe("waitForSidecarSubscriptions", () => {
  it("is ready at once beside a sidecar that is already healthy (the app restarted, its sidecar did not)", async () => {
    const { http } = await healthEndpoint(true);
    // The sidecar never reads /dapr/subscribe again: this promise never settles.
    const subscriptionsRead = new Promise<void>(() => undefined);
    await expect(
      waitForSidecarSubscriptions({ http, logger, subscriptionsRead, signal: new AbortController().signal }),
    ).resolves.toBeUndefined();
  });

  it("waits for the sidecar to read the subscriptions, then for it to report healthy", async () => {
    const { sidecar, http } = await healthEndpoint(false);
    let read!: () => void;
    const subscriptionsRead = new Promise<void>((resolve) => (read = resolve));
    let ready = false;
    const waiting = waitForSidecarSubscriptions({
      http,
      logger,
      subscriptionsRead,
      signal: new AbortController().signal,
      initialDelayMs: 5,
      maxDelayMs: 20,
    }).then(() => (ready = true));
    await new Promise((resolve) => setTimeout(resolve, 100));
    // Unhealthy and subscriptions not read: one probe (the already-healthy check), no polling yet.
    expect(ready).toBe(false);
    expect(sidecar.probes).toBe(1);
    read();
    // Read, but still initialising: it keeps polling and is not ready.
    while (sidecar.probes < 3) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(ready).toBe(false);
    sidecar.healthy = true;
    await waiting;
    expect(ready).toBe(true);
  });

  it("gives up when the app stops before the sidecar is ready", async () => {
    const { http } = await healthEndpoint(false);
    const abort = new AbortController();
    const waiting = waitForSidecarSubscriptions({
      http,
      logger,
      subscriptionsRead: Promise.resolve(),
      signal: abort.signal,
      initialDelayMs: 5,
      maxDelayMs: 20,
    });
    abort.abort(new Error("stopping"));
    await expect(waiting).rejects.toThrow("stopping");
  });
});

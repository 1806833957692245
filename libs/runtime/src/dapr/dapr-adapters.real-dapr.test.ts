import { openRealSidecar, type RealSidecarFixture } from "@matoolkit/dapr-harness";
import { topics } from "@matoolkit/domain";
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../logger.ts";
import type { OutgoingMessage } from "../ports/index.ts";
import { createDaprAppServer, type DaprAppServer } from "./dapr-app-server.ts";
import { createDaprHttp, type DaprHttp } from "./dapr-http.ts";
import { createDaprJobsClient } from "./dapr-jobs-client.ts";
import { createDaprJobsTimers } from "./dapr-jobs-timers.ts";
import { createDaprStateStore } from "./dapr-state-store.ts";

/**
 * The Dapr adapters against a REAL daprd, placement and scheduler (MATOOLKIT_DAPR_VERSION, default
 * the newest pinned; `npm run dapr:install` builds them) on components/local with a Redis of the
 * test's own. Each test is a finding of issue 24 that the stand-in sidecar let through: it failed
 * on real daprd before the adapter was fixed.
 */
const version = process.env.MATOOLKIT_DAPR_VERSION ?? "newest";
const logger = createLogger({ level: "silent", name: "dapr-real-test" });
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function sidecarWithApp(options: { resiliency?: boolean } = {}): Promise<{
  fixture: RealSidecarFixture;
  http: DaprHttp;
  app: DaprAppServer;
}> {
  const fixture = await openRealSidecar({ version, env: process.env, ...options });
  cleanups.push(() => fixture.close());
  const http = createDaprHttp({ httpEndpoint: fixture.httpEndpoint });
  const app = createDaprAppServer({ host: "127.0.0.1", port: fixture.appPort, logger });
  cleanups.push(() => app.close());
  return { fixture, http, app };
}

async function until<T>(
  read: () => Promise<T> | T,
  done: (value: T) => boolean,
  what: string,
  timeoutMs = 30_000,
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe(`Dapr adapters on real daprd (${version})`, { timeout: 120_000 }, () => {
  it("delivers a delayed message through a one-shot job on the real Scheduler (failure policy interval as a protobuf Duration)", async () => {
    const { http, app } = await sidecarWithApp();
    const timers = createDaprJobsTimers({
      jobs: createDaprJobsClient(http, "v1.0-alpha1"),
      app,
      state: createDaprStateStore(http, "matoolkit-state"),
      logger,
      deliveryRetryIntervalMs: 200,
    });
    cleanups.push(() => timers.stop());
    const published: OutgoingMessage[] = [];
    const publishNow = async (message: OutgoingMessage) => void published.push(message);
    timers.attachPublisher(publishNow);
    await app.listen();

    const deliverAt = new Date(Date.now() + 1_500);
    // Before the fix daprd answered 400 ERR_MALFORMED_REQUEST here ("5000ms" is no Duration).
    await timers.deliverLater(
      {
        id: "poll-check:step-1-poll-1",
        topic: topics.orchestratorEvents,
        properties: { MessageType: "poll-check" },
        body: { StepExecutionId: 1 },
        deliverAt,
      },
      publishNow,
    );
    const [message] = await until(
      () => published,
      (list) => list.length > 0,
      "the delayed message",
    );
    expect(message).toMatchObject({ id: "poll-check:step-1-poll-1", topic: topics.orchestratorEvents });
    expect(Date.now()).toBeGreaterThanOrEqual(deliverAt.getTime() - 50);
  });

  it("runs a recurring timer: the real Scheduler triggers the app every second", async () => {
    const { http, app } = await sidecarWithApp();
    const timers = createDaprJobsTimers({
      jobs: createDaprJobsClient(http, "v1.0-alpha1"),
      app,
      state: createDaprStateStore(http, "matoolkit-state"),
      logger,
    });
    cleanups.push(() => timers.stop());
    const fired: Date[] = [];
    await timers.scheduleRecurring(
      { name: "scheduler-tick", everySeconds: 1 },
      async (at) => void fired.push(at),
    );
    await app.listen();
    // Before the fix (a job without data) daprd 1.16.0–1.18.2 failed every trigger: never fired.
    await until(
      () => fired.length,
      (count) => count >= 2,
      "two ticks",
      20_000,
    );
  });

  it("overwrites a key first written with first-write concurrency (state.redis)", async () => {
    const { http } = await sidecarWithApp();
    const state = createDaprStateStore(http, "matoolkit-state");
    expect(await state.create("delivery|t|s|m-1", { status: "running" }, 60)).toBe(true);
    // Before the fix: 500 ERR_STATE_SAVE (Redis refuses a last-write on a first-write key).
    await state.put("delivery|t|s|m-1", { status: "succeeded" }, 60);
    expect((await state.get("delivery|t|s|m-1"))?.value).toEqual({ status: "succeeded" });
    await state.put("delivery|t|s|m-1", { status: "succeeded", again: true }, 60);
    expect((await state.get("delivery|t|s|m-1"))?.value).toEqual({ status: "succeeded", again: true });
    await state.put("fresh-key", { n: 1 }, 60);
    expect((await state.get("fresh-key"))?.value).toEqual({ n: 1 });
  });

  it("dead-letters a delivery to a route the app does not serve (daprd 1.16 drops a 404 without dead-lettering)", async () => {
    const { http, app } = await sidecarWithApp({ resiliency: false });
    const deadLetters: unknown[] = [];
    app.announceSubscriptions(() => [
      {
        pubsubname: "matoolkit-pubsub",
        topic: "probe",
        routes: { default: "/dapr/topics/probe-not-served" },
        deadLetterTopic: "probe-deadletter",
      },
      { pubsubname: "matoolkit-pubsub", topic: "probe-deadletter", routes: { default: "/dead" } },
    ]);
    app.route("/dead", async (event) => {
      deadLetters.push(event);
      return "SUCCESS";
    });
    await app.listen();
    // daprd subscribes once the app's port answers; publish until the subscription is live.
    await until(
      async () => {
        await http.request({
          method: "POST",
          path: "/v1.0/publish/matoolkit-pubsub/probe",
          operation: "pubsub.publish",
          json: { probe: true },
        });
        return deadLetters.length;
      },
      (count) => count > 0,
      "the message in the dead-letter topic",
      60_000,
    );
    expect(deadLetters[0]).toMatchObject({ data: { probe: true } });
  });

  it("authenticates both ways with DAPR_API_TOKEN and APP_API_TOKEN: strangers refused, the pair works", async () => {
    const apiToken = randomBytes(24).toString("base64url");
    const appApiToken = randomBytes(24).toString("base64url");
    const fixture = await openRealSidecar({ version, env: process.env, apiToken, appApiToken });
    cleanups.push(() => fixture.close());
    const metadata = `${fixture.httpEndpoint}/v1.0/metadata`;
    expect((await fetch(metadata)).status).toBe(401);
    expect((await fetch(metadata, { headers: { "dapr-api-token": appApiToken } })).status).toBe(401);
    expect((await fetch(metadata, { headers: { "dapr-api-token": apiToken } })).status).toBe(200);

    const http = createDaprHttp({ httpEndpoint: fixture.httpEndpoint, apiToken });
    const app = createDaprAppServer({ host: "127.0.0.1", port: fixture.appPort, logger, appApiToken });
    cleanups.push(() => app.close());
    const received: unknown[] = [];
    app.announceSubscriptions(() => [
      { pubsubname: "matoolkit-pubsub", topic: "probe", routes: { default: "/probe" } },
    ]);
    app.route("/probe", async (event) => {
      received.push(event);
      return "SUCCESS";
    });
    const { url } = await app.listen();
    // A caller other than daprd (e.g. a webhook pointed at the app port) cannot deliver or trigger.
    for (const path of ["/probe", "/job/scheduler-tick", "/dapr/subscribe"]) {
      const stranger = await fetch(`${url}${path}`, { method: path === "/dapr/subscribe" ? "GET" : "POST" });
      expect(stranger.status, path).toBe(401);
    }
    // The sidecar presents APP_API_TOKEN on its callbacks: the subscription is read, delivery lands.
    await until(
      async () => {
        await http.request({
          method: "POST",
          path: "/v1.0/publish/matoolkit-pubsub/probe",
          operation: "pubsub.publish",
          json: { probe: "authenticated" },
        });
        return received.length;
      },
      (count) => count > 0,
      "a delivery through the authenticated app channel",
      60_000,
    );
    expect(received[0]).toMatchObject({ data: { probe: "authenticated" } });
  });
});

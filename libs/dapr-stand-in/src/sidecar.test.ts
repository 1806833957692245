import { freePort } from "@matoolkit/dapr-harness/free-port";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  createStandInBroker,
  startStandInSidecar,
  type StandInBroker,
  type StandInSidecar,
} from "./index.ts";
import { startTestApp, type TestApp } from "./test-app.ts";

const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function newBroker(): StandInBroker {
  const broker = createStandInBroker();
  cleanups.push(() => broker.close());
  return broker;
}

async function track<T extends StandInSidecar | TestApp>(started: Promise<T>): Promise<T> {
  const value = await started;
  cleanups.push(() => value.stop());
  return value;
}

const status = async (url: string, init?: RequestInit) => (await fetch(url, init)).status;

describe("sidecar lifecycle", () => {
  it("reports outbound health after startDelayMs and full health only once the app is up and its subscriptions are read", async () => {
    const appPort = await freePort();
    const sidecar = await track(
      startStandInSidecar({
        broker: newBroker(),
        appId: "matoolkit-worker",
        appUrl: `http://127.0.0.1:${appPort}`,
        // Long enough that the first checks surely run before it, even on a loaded machine.
        startDelayMs: 2000,
        log: () => undefined,
      }),
    );

    expect(await status(`${sidecar.url}/v1.0/healthz/outbound`)).toBe(500);
    expect(await status(`${sidecar.url}/v1.0/healthz`)).toBe(500);
    expect(await status(`${sidecar.url}/v1.0/state/matoolkit-state/k`)).toBe(500);

    await vi.waitFor(async () => expect(await status(`${sidecar.url}/v1.0/healthz/outbound`)).toBe(204), {
      timeout: 10_000,
      interval: 50,
    });
    expect(await status(`${sidecar.url}/v1.0/state/matoolkit-state/k`)).toBe(204);
    expect(await status(`${sidecar.url}/v1.0/healthz`)).toBe(500);

    const app = await track(
      startTestApp({
        port: appPort,
        subscriptions: [{ pubsubname: "matoolkit-pubsub", topic: "worker-jobs", route: "/jobs" }],
      }),
    );
    await sidecar.ready();
    expect(await status(`${sidecar.url}/v1.0/healthz`)).toBe(204);
    expect(app.requests.filter((request) => request.path === "/dapr/subscribe")).toHaveLength(1);
    expect(sidecar.subscriptions()).toEqual([
      {
        pubsubName: "matoolkit-pubsub",
        topic: "worker-jobs",
        rules: [{ match: undefined, path: "/jobs" }],
        deadLetterTopic: undefined,
        metadata: {},
      },
    ]);
  });

  it("requires dapr-api-token on every API but healthz when an API token is set, and sends the app token to the app", async () => {
    const app = await track(startTestApp());
    const sidecar = await track(
      startStandInSidecar({
        broker: newBroker(),
        appId: "a",
        appUrl: app.url,
        apiToken: "sidecar-secret",
        appApiToken: "app-secret",
        log: () => undefined,
      }),
    );
    await sidecar.ready();

    expect(await status(`${sidecar.url}/v1.0/metadata`)).toBe(401);
    expect(await status(`${sidecar.url}/v1.0/metadata`, { headers: { "dapr-api-token": "wrong" } })).toBe(
      401,
    );
    expect(
      await status(`${sidecar.url}/v1.0/publish/matoolkit-pubsub/t`, { method: "POST", body: "{}" }),
    ).toBe(401);
    expect(
      await status(`${sidecar.url}/v1.0/metadata`, { headers: { "dapr-api-token": "sidecar-secret" } }),
    ).toBe(200);
    expect(await status(`${sidecar.url}/v1.0/healthz`)).toBe(204);
    expect(await status(`${sidecar.url}/v1.0/healthz/outbound`)).toBe(204);
    expect(app.requests[0]?.headers["dapr-api-token"]).toBe("app-secret");
  });

  it("describes itself on GET /v1.0/metadata", async () => {
    const app = await track(
      startTestApp({
        subscriptions: [
          {
            pubsubname: "matoolkit-pubsub",
            topic: "worker-jobs",
            routes: { rules: [{ match: 'event.data.WorkerId == "worker-01"', path: "/w" }] },
            deadLetterTopic: "worker-jobs-deadletter",
          },
        ],
      }),
    );
    const sidecar = await track(
      startStandInSidecar({
        broker: newBroker(),
        appId: "matoolkit-worker",
        appUrl: app.url,
        log: () => undefined,
      }),
    );
    await sidecar.ready();

    const metadata = await (await fetch(`${sidecar.url}/v1.0/metadata`)).json();
    expect(metadata).toMatchObject({
      id: "matoolkit-worker",
      components: [
        // honourScheduledEnqueueTime (the default) emulates Service Bus, and says so.
        { name: "matoolkit-pubsub", type: "pubsub.azure.servicebus.topics", version: "v1" },
        { name: "matoolkit-state", type: "state.in-memory", version: "v1" },
      ],
      subscriptions: [
        {
          pubsubname: "matoolkit-pubsub",
          topic: "worker-jobs",
          rules: [{ match: 'event.data.WorkerId == "worker-01"', path: "/w" }],
          deadLetterTopic: "worker-jobs-deadletter",
        },
      ],
    });
  });

  it("rejects a subscription whose routing rule uses CEL the stand-in does not support, with a clear error, and keeps the others", async () => {
    const logged: string[] = [];
    const app = await track(
      startTestApp({
        subscriptions: [
          {
            pubsubname: "matoolkit-pubsub",
            topic: "big-deposits",
            routes: { rules: [{ match: "event.data.amount > 10000", path: "/big" }] },
          },
          {
            pubsubname: "matoolkit-pubsub",
            topic: "sized",
            routes: { rules: [{ match: "size(event.data) == 1", path: "/sized" }] },
          },
          { pubsubname: "unknown-pubsub", topic: "elsewhere", route: "/elsewhere" },
          { pubsubname: "matoolkit-pubsub", topic: "fine", route: "/fine" },
        ],
      }),
    );
    const sidecar = await track(
      startStandInSidecar({
        broker: newBroker(),
        appId: "a",
        appUrl: app.url,
        log: (level, message) => logged.push(`${level}: ${message}`),
      }),
    );
    await sidecar.ready();

    expect(sidecar.subscriptions().map((subscription) => subscription.topic)).toEqual(["fine"]);
    const errors = sidecar.errors();
    expect(errors).toHaveLength(3);
    expect(errors[0]).toContain('unsupported CEL in routing rule "event.data.amount > 10000"');
    expect(errors[1]).toContain('function "size" is not supported');
    expect(errors[2]).toContain('pubsub "unknown-pubsub" is not a component of this sidecar');
    expect(logged.filter((line) => line.startsWith("error:"))).toHaveLength(3);
  });

  it("stops cleanly: the port closes and an undelivered message goes to the next sidecar of the app id", async () => {
    const broker = newBroker();
    let answer: (() => void) | undefined;
    const slowApp = await track(
      startTestApp({
        subscriptions: [{ pubsubname: "matoolkit-pubsub", topic: "t", route: "/t" }],
        handler: () => new Promise((resolve) => (answer = () => resolve({ status: 200 }))),
      }),
    );
    const first = await startStandInSidecar({
      broker,
      appId: "a",
      appUrl: slowApp.url,
      log: () => undefined,
    });
    await first.ready();
    const publisher = await track(startStandInSidecar({ broker, appId: "p", log: () => undefined }));
    // Until its start timer fires a sidecar answers 500 not-ready: publish only once it is up.
    await publisher.ready();
    const published = await fetch(`${publisher.url}/v1.0/publish/matoolkit-pubsub/t`, {
      method: "POST",
      body: "{}",
    });
    expect(published.status).toBe(204);
    await slowApp.waitForRequests("/t", 1);

    await first.stop();
    answer?.();
    await expect(fetch(`${first.url}/v1.0/healthz`)).rejects.toThrow();

    const fastApp = await track(
      startTestApp({ subscriptions: [{ pubsubname: "matoolkit-pubsub", topic: "t", route: "/t" }] }),
    );
    await (
      await track(startStandInSidecar({ broker, appId: "a", appUrl: fastApp.url, log: () => undefined }))
    ).ready();
    await fastApp.waitForRequests("/t", 1);
  });
});

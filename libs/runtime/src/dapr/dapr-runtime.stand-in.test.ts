import { freePort } from "@matoolkit/dapr-harness/free-port";
import { randomUUID } from "node:crypto";
import { topics } from "@matoolkit/domain";
import { createStandInBroker, startStandInSidecar, type StandInBroker } from "@matoolkit/dapr-stand-in";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createLogger } from "../logger.ts";
import { DeliveryDeferredError } from "../ports/index.ts";
import { workerJobsSubscription } from "../topology.ts";
import { createDaprRuntime, type DaprRuntime, type DaprRuntimeOptions } from "./create-dapr-runtime.ts";

/**
 * Dapr-specific behaviour the contract suites do not cover: start-up before the sidecar,
 * the response contract as the sidecar sees it, worker routing, timers across replicas and the
 * app token. Against the stand-in sidecar (libs/dapr-stand-in).
 */
let database: TestDatabase;
let broker: StandInBroker;
const cleanups: Array<() => Promise<void>> = [];
beforeAll(async () => {
  database = await createTestDatabase();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  broker?.close();
});
afterAll(async () => {
  await database?.drop();
});

const logger = createLogger({ level: "silent", name: "dapr-runtime-test" });
const waitUntil = (assertion: () => void | Promise<void>, timeout = 10_000) =>
  vi.waitFor(assertion, { timeout, interval: 25 });

async function openApp(
  appId: string,
  options: {
    startDelayMs?: number;
    appApiToken?: string;
    timers?: NonNullable<DaprRuntimeOptions["ports"]["timers"]>;
  } = {},
) {
  const appPort = await freePort();
  const sidecar = await startStandInSidecar({
    broker,
    appId,
    appUrl: `http://127.0.0.1:${appPort}`,
    startDelayMs: options.startDelayMs ?? 0,
    ...(options.appApiToken === undefined ? {} : { appApiToken: options.appApiToken }),
    log: () => undefined,
  });
  const runtime: DaprRuntime = await createDaprRuntime({
    sidecar: { httpEndpoint: sidecar.url },
    app: {
      host: "127.0.0.1",
      port: appPort,
      ...(options.appApiToken === undefined ? {} : { apiToken: options.appApiToken }),
    },
    pubsubName: "matoolkit-pubsub",
    stateStoreName: "matoolkit-state",
    jobsApiVersion: "v1.0-alpha1",
    db: database.db,
    logger,
    dedupeWindowSeconds: 600,
    ports: { bus: true, timers: options.timers ?? "dapr-jobs", idempotency: true },
  });
  cleanups.push(async () => {
    await runtime.stop();
    await sidecar.stop();
  });
  return { runtime, sidecar, appUrl: `http://127.0.0.1:${appPort}` };
}

describe("Dapr runtime against the stand-in sidecar", () => {
  it("starts before its sidecar, reports not-ready until the sidecar answers, then ready", async () => {
    broker = createStandInBroker();
    const { runtime, appUrl } = await openApp("slow-sidecar", { startDelayMs: 1500 });
    await runtime.start();
    const early = await fetch(`${appUrl}/readyz`);
    expect(early.status).toBe(503);
    expect((await fetch(`${appUrl}/healthz`)).status).toBe(200);
    await runtime.sidecarReady;
    expect((await fetch(`${appUrl}/readyz`)).status).toBe(200);
  });

  it("turns ready only once its sidecar subscribed its topics: a broker drops what is published before", async () => {
    broker = createStandInBroker();
    const { runtime, sidecar, appUrl } = await openApp("subscribing-app");
    await runtime.bus!.subscribe({ topic: topics.orchestratorEvents, name: "orchestrator" }, async () => {});
    let ready = false;
    void runtime.sidecarReady.then(() => (ready = true));
    // The sidecar answers at once, but reads the app's subscriptions only once the app's port is open.
    await waitUntil(async () =>
      expect((await fetch(`${sidecar.url}/v1.0/healthz/outbound`)).status).toBe(204),
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(ready).toBe(false);
    expect(sidecar.subscriptions()).toEqual([]);

    await runtime.start();
    await runtime.sidecarReady;
    expect(sidecar.subscriptions().map((subscription) => subscription.topic)).toContain(
      topics.orchestratorEvents,
    );
    expect((await fetch(`${appUrl}/readyz`)).status).toBe(200);
  });

  it("answers RETRY, never SUCCESS, when a handler throws, and SUCCESS once it succeeds", async () => {
    broker = createStandInBroker({ redeliveryDelayMs: 20 });
    const { runtime, sidecar } = await openApp("flaky-app");
    let calls = 0;
    await runtime.bus!.subscribe({ topic: topics.orchestratorEvents, name: "orchestrator" }, async () => {
      calls += 1;
      if (calls < 3) throw new Error("database unavailable");
    });
    await runtime.start();
    await sidecar.ready();
    const id = randomUUID();
    await runtime.bus!.publish({
      id,
      topic: topics.orchestratorEvents,
      properties: {},
      body: { BatchId: 1 },
    });

    await waitUntil(() => expect(calls).toBe(3));
    await waitUntil(() =>
      expect(sidecar.deliveries().map((delivery) => delivery.outcome)).toEqual(["retry", "retry", "success"]),
    );
    expect(broker.messages(`${topics.orchestratorEvents}-deadletter`)).toEqual([]);
  });

  it("does not count deferred deliveries (a stopping worker) as attempts, so they never dead-letter", async () => {
    broker = createStandInBroker({ redeliveryDelayMs: 5, maxDeliveryAttempts: 100 });
    const { runtime, sidecar } = await openApp("stopping-app");
    const counts: number[] = [];
    let deferrals = 0;
    await runtime.bus!.subscribe(
      { topic: topics.orchestratorEvents, name: "orchestrator" },
      async (delivery) => {
        if (deferrals < 15) {
          deferrals += 1;
          throw new DeliveryDeferredError("worker is stopping");
        }
        counts.push(delivery.deliveryCount);
      },
    );
    await runtime.start();
    await sidecar.ready();
    await runtime.bus!.publish({
      id: randomUUID(),
      topic: topics.orchestratorEvents,
      properties: {},
      body: {},
    });

    await waitUntil(() => expect(counts).toEqual([1]));
    expect(deferrals).toBe(15);
    expect(
      await runtime.bus!.deadLetters({ topic: topics.orchestratorEvents, name: "orchestrator" }),
    ).toEqual([]);
  });

  it("routes a worker's jobs to it by rule, and acknowledges another worker's job without running it", async () => {
    broker = createStandInBroker({ redeliveryDelayMs: 20 });
    const { runtime, sidecar } = await openApp("matoolkit-worker");
    const ran: string[] = [];
    await runtime.bus!.subscribe(workerJobsSubscription("worker-01"), async (delivery) => {
      ran.push(delivery.id);
    });
    await runtime.start();
    await sidecar.ready();
    expect(sidecar.subscriptions()).toEqual([
      expect.objectContaining({
        topic: topics.workerJobs,
        rules: [
          { match: 'event.data.WorkerId == "worker-01"', path: "/dapr/topics/worker-jobs/worker-worker-01" },
          { match: undefined, path: "/dapr/unmatched/worker-jobs" },
        ],
        deadLetterTopic: "worker-jobs-deadletter",
      }),
      // Dapr's own dead letters are read back (dead-letter-intake.ts), with no dead-letter topic.
      expect.objectContaining({
        topic: "worker-jobs-deadletter",
        rules: [{ match: undefined, path: "/dapr/deadletters/worker-jobs" }],
        deadLetterTopic: undefined,
      }),
    ]);

    const publish = (id: string, workerId: string) =>
      runtime.bus!.publish({
        id,
        topic: topics.workerJobs,
        properties: { WorkerId: workerId },
        body: { JobId: id, WorkerId: workerId },
      });
    await publish("job-for-02", "worker-02");
    await publish("job-for-01", "worker-01");

    await waitUntil(() => expect(ran).toEqual(["job-for-01"]));
    await waitUntil(() => expect(sidecar.deliveries()).toHaveLength(2));
    expect(sidecar.deliveries().every((delivery) => delivery.outcome === "success")).toBe(true);
    expect(broker.messages(`${topics.workerJobs}-deadletter`)).toEqual([]);
    // The broker got the routing properties as metadata (Service Bus application properties).
    expect(broker.messages(topics.workerJobs)[0]?.metadata).toMatchObject({
      WorkerId: "worker-02",
      MessageId: "job-for-02",
      "cloudevent.id": "job-for-02",
    });
  });

  it("runs a recurring timer once per period across two replicas of the app", async () => {
    broker = createStandInBroker();
    const runs: Date[] = [];
    for (const replica of [1, 2]) {
      const { runtime } = await openApp("matoolkit-scheduler");
      await runtime.timers!.scheduleRecurring(
        { name: "scheduler-tick", everySeconds: 1 },
        async (firedAt) => {
          runs.push(firedAt);
          void replica;
        },
      );
      await runtime.start();
    }
    await waitUntil(() => expect(runs.length).toBeGreaterThanOrEqual(3), 8_000);
    const periods = runs.map((firedAt) => Math.floor(firedAt.getTime() / 1000));
    expect(new Set(periods).size).toBe(periods.length);
    expect(broker.jobs("matoolkit-scheduler").map((job) => job.name)).toEqual(["scheduler-tick"]);
  });

  it("runs the recurring timer once per period with delayed-message timers too (no Jobs API)", async () => {
    broker = createStandInBroker();
    const runs: number[] = [];
    for (let replica = 0; replica < 2; replica += 1) {
      const { runtime } = await openApp("aca-scheduler", { timers: "dapr-delayed-messages" });
      await runtime.timers!.scheduleRecurring(
        { name: "scheduler-tick", everySeconds: 1 },
        async (firedAt) => {
          runs.push(Math.floor(firedAt.getTime() / 1000));
        },
      );
      await runtime.start();
    }
    await waitUntil(() => expect(runs.length).toBeGreaterThanOrEqual(3), 8_000);
    expect(new Set(runs).size).toBe(runs.length);
    expect(broker.jobs()).toEqual([]);
  });

  it("refuses callbacks without the app token when APP_API_TOKEN is set, and serves the sidecar that has it", async () => {
    broker = createStandInBroker();
    const { runtime, sidecar, appUrl } = await openApp("guarded-app", { appApiToken: "app-token-123" });
    await runtime.bus!.subscribe(
      { topic: topics.workerResults, name: "orchestrator" },
      async () => undefined,
    );
    await runtime.start();
    await sidecar.ready();
    expect((await fetch(`${appUrl}/dapr/subscribe`)).status).toBe(401);
    expect(sidecar.subscriptions().map((subscription) => subscription.topic)).toEqual([
      topics.workerResults,
      `${topics.workerResults}-deadletter`,
    ]);
  });
});

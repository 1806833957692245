import { afterEach, describe, expect, it } from "vitest";
import {
  createStandInBroker,
  startStandInSidecar,
  type StandInBroker,
  type StandInSidecar,
} from "./index.ts";
import { startTestApp, type AppHandler, type TestApp } from "./test-app.ts";

const PUBSUB = "matoolkit-pubsub";
const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function newBroker(options: Parameters<typeof createStandInBroker>[0] = {}): StandInBroker {
  const broker = createStandInBroker({ redeliveryDelayMs: 10, ...options });
  cleanups.push(() => broker.close());
  return broker;
}

async function newApp(subscriptions: unknown, handler?: AppHandler): Promise<TestApp> {
  const app = await startTestApp({ subscriptions, ...(handler ? { handler } : {}) });
  cleanups.push(() => app.stop());
  return app;
}

async function newSidecar(
  broker: StandInBroker,
  appId: string,
  app: TestApp | undefined,
  extra: Partial<Parameters<typeof startStandInSidecar>[0]> = {},
): Promise<StandInSidecar> {
  const sidecar = await startStandInSidecar({
    broker,
    appId,
    ...(app ? { appUrl: app.url } : {}),
    log: () => undefined,
    ...extra,
  });
  cleanups.push(() => sidecar.stop());
  await sidecar.ready();
  return sidecar;
}

async function publish(
  sidecar: StandInSidecar,
  topic: string,
  data: unknown,
  metadata: Record<string, string> = {},
  pubsub = PUBSUB,
): Promise<Response> {
  const query = new URLSearchParams(
    Object.entries(metadata).map(([key, value]): [string, string] => [`metadata.${key}`, value]),
  );
  return fetch(`${sidecar.url}/v1.0/publish/${pubsub}/${topic}?${query}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(data),
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("publish and delivery", () => {
  it("wraps the data in a CloudEvent with the metadata overrides, keeps the metadata on the broker and delivers it to the subscribed route", async () => {
    const broker = newBroker();
    const app = await newApp([
      {
        pubsubname: PUBSUB,
        topic: "orchestrator-events",
        route: "/dapr/topics/orchestrator-events/orchestrator",
      },
    ]);
    const subscriber = await newSidecar(broker, "matoolkit-orchestrator", app, { appApiToken: "app-secret" });
    const publisher = await newSidecar(broker, "matoolkit-scheduler", undefined);

    const response = await publish(
      publisher,
      "orchestrator-events",
      { batchId: "b-1" },
      {
        "cloudevent.id": "msg-1",
        "cloudevent.type": "BatchStarted",
        MessageType: "BatchStarted",
        MessageId: "msg-1",
      },
    );
    expect(response.status).toBe(204);

    const [delivered] = await app.waitForRequests("/dapr/topics/orchestrator-events/orchestrator", 1);
    expect(delivered?.headers["content-type"]).toBe("application/cloudevents+json");
    expect(delivered?.headers["dapr-api-token"]).toBe("app-secret");
    const event = JSON.parse(delivered?.body ?? "{}");
    expect(event).toMatchObject({
      id: "msg-1",
      type: "BatchStarted",
      source: "matoolkit-scheduler",
      specversion: "1.0",
      datacontenttype: "application/json",
      data: { batchId: "b-1" },
      topic: "orchestrator-events",
      pubsubname: PUBSUB,
    });
    expect(event.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(Date.parse(event.time)).not.toBeNaN();

    const [stored] = broker.messages("orchestrator-events");
    expect(stored?.metadata).toEqual({
      "cloudevent.id": "msg-1",
      "cloudevent.type": "BatchStarted",
      MessageType: "BatchStarted",
      MessageId: "msg-1",
    });
    expect(subscriber.deliveries()).toEqual([
      expect.objectContaining({
        cloudEventId: "msg-1",
        outcome: "success",
        httpStatus: 200,
        path: "/dapr/topics/orchestrator-events/orchestrator",
      }),
    ]);
  });

  it("passes an application/cloudevents+json body through as the app's own CloudEvent", async () => {
    const broker = newBroker();
    const publisher = await newSidecar(broker, "publisher", undefined);
    const response = await fetch(`${publisher.url}/v1.0/publish/${PUBSUB}/custom`, {
      method: "POST",
      headers: { "content-type": "application/cloudevents+json" },
      body: JSON.stringify({
        specversion: "1.0",
        id: "own-id",
        type: "own.type",
        source: "own-source",
        data: { a: 1 },
      }),
    });
    expect(response.status).toBe(204);
    expect(await broker.waitForMessage("custom")).toMatchObject({
      id: "own-id",
      type: "own.type",
      source: "own-source",
      data: { a: 1 },
      topic: "custom",
    });
  });

  it("answers an unknown pub/sub component with 404 ERR_PUBSUB_NOT_FOUND", async () => {
    const broker = newBroker();
    const publisher = await newSidecar(broker, "publisher", undefined);
    const response = await publish(publisher, "any-topic", {}, {}, "no-such-pubsub");
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({
      errorCode: "ERR_PUBSUB_NOT_FOUND",
      message: expect.stringContaining("no-such-pubsub"),
    });
  });
});

describe("routing rules", () => {
  it("sends a message to the first matching rule's path, falls back to the default route, and evaluates quotes and boolean operators", async () => {
    const broker = newBroker();
    const app = await newApp([
      {
        pubsubname: PUBSUB,
        topic: "events",
        routes: {
          rules: [
            { match: `event.type == "widget" && event.data.size != 'small'`, path: "/widgets" },
            { match: `(event.type == 'gadget') || event.data.kind == "gadget"`, path: "/gadgets" },
          ],
          default: "/other",
        },
      },
    ]);
    await newSidecar(broker, "router", app);
    const publisher = await newSidecar(broker, "publisher", undefined);

    await publish(publisher, "events", { size: "large" }, { "cloudevent.type": "widget" });
    await publish(publisher, "events", { kind: "gadget", size: "small" }, { "cloudevent.type": "thing" });
    await publish(publisher, "events", { size: "small", kind: "widget" }, { "cloudevent.type": "widget" });

    await app.waitForRequests("/widgets", 1);
    await app.waitForRequests("/gadgets", 1);
    const [other] = await app.waitForRequests("/other", 1);
    expect(JSON.parse(other?.body ?? "{}").data).toEqual({ size: "small", kind: "widget" });
  });

  it("treats a rule that selects a missing field as an evaluation error (CEL), which daprd dead-letters at once", async () => {
    const broker = newBroker();
    const app = await newApp([
      {
        pubsubname: PUBSUB,
        topic: "worker-jobs",
        routes: { rules: [{ match: `event.data.WorkerId == "worker-01"`, path: "/job" }] },
        deadLetterTopic: "worker-jobs-deadletter",
      },
    ]);
    const worker = await newSidecar(broker, "matoolkit-worker", app);
    const publisher = await newSidecar(broker, "publisher", undefined);
    await publish(publisher, "worker-jobs", { NoWorkerId: true }, { "cloudevent.id": "unroutable" });

    await broker.waitForMessage("worker-jobs-deadletter", (event) => event.id === "unroutable");
    expect(worker.deliveries()).toEqual([
      expect.objectContaining({
        outcome: "error",
        detail: expect.stringContaining("no such key: WorkerId"),
        deadLetteredTo: "worker-jobs-deadletter",
      }),
    ]);
    expect(app.jsonBodies("/job")).toHaveLength(0);
  });

  it("does not deliver a message no rule matches when there is no default route, and forwards it to the dead-letter topic when one is set (daprd does)", async () => {
    const broker = newBroker();
    const workerSubscription = (deadLetterTopic?: string) => [
      {
        pubsubname: PUBSUB,
        topic: deadLetterTopic ? "jobs-with-dlt" : "jobs",
        routes: {
          rules: [
            {
              match: `event.data.WorkerId == "worker-01"`,
              path: "/dapr/topics/worker-jobs/worker-worker-01",
            },
          ],
        },
        ...(deadLetterTopic ? { deadLetterTopic } : {}),
      },
    ];
    const app = await newApp([...workerSubscription(), ...workerSubscription("jobs-with-dlt-deadletter")]);
    const worker = await newSidecar(broker, "matoolkit-worker", app);
    const publisher = await newSidecar(broker, "publisher", undefined);

    await publish(publisher, "jobs", { WorkerId: "worker-02" }, { "cloudevent.id": "for-02" });
    await publish(publisher, "jobs", { WorkerId: "worker-01" }, { "cloudevent.id": "for-01" });
    await publish(publisher, "jobs-with-dlt", { WorkerId: "worker-02" }, { "cloudevent.id": "for-02-dlt" });

    const delivered = await app.waitForRequests("/dapr/topics/worker-jobs/worker-worker-01", 1);
    expect(
      await broker.waitForMessage("jobs-with-dlt-deadletter", (event) => event.id === "for-02-dlt"),
    ).toMatchObject({ topic: "jobs-with-dlt" });
    await sleep(50);
    expect(delivered.map((request) => JSON.parse(request.body).id)).toEqual(["for-01"]);
    expect(
      worker
        .deliveries()
        .filter((record) => record.outcome === "no-route")
        .map((record) => record.cloudEventId)
        .sort(),
    ).toEqual(["for-02", "for-02-dlt"]);
    expect(broker.messages("jobs-deadletter")).toEqual([]);
  });
});

describe("app responses", () => {
  it("redelivers after RETRY until the app answers SUCCESS", async () => {
    const broker = newBroker();
    let calls = 0;
    const app = await newApp([{ pubsubname: PUBSUB, topic: "retry-topic", route: "/handle" }], () => {
      calls += 1;
      return { status: 200, body: { status: calls < 3 ? "RETRY" : "SUCCESS" } };
    });
    const subscriber = await newSidecar(broker, "subscriber", app);
    const publisher = await newSidecar(broker, "publisher", undefined);
    await publish(publisher, "retry-topic", { n: 1 });

    await app.waitForRequests("/handle", 3);
    await sleep(30);
    expect(subscriber.deliveries().map((record) => [record.attempt, record.outcome])).toEqual([
      [1, "retry"],
      [2, "retry"],
      [3, "success"],
    ]);
  });

  it("forwards a DROPped message to the dead-letter topic, where a subscriber of that topic receives the original CloudEvent", async () => {
    const broker = newBroker();
    const app = await newApp(
      [
        {
          pubsubname: PUBSUB,
          topic: "orchestrator-events",
          route: "/main",
          deadLetterTopic: "orchestrator-events-deadletter",
        },
        { pubsubname: PUBSUB, topic: "orchestrator-events-deadletter", route: "/dead" },
      ],
      (request) => ({ status: 200, body: { status: request.path === "/main" ? "DROP" : "SUCCESS" } }),
    );
    const subscriber = await newSidecar(broker, "matoolkit-orchestrator", app);
    const publisher = await newSidecar(broker, "publisher", undefined);
    await publish(
      publisher,
      "orchestrator-events",
      { x: 1 },
      { "cloudevent.id": "poison", MessageType: "Poison" },
    );

    const [dead] = await app.waitForRequests("/dead", 1);
    expect(JSON.parse(dead?.body ?? "{}")).toMatchObject({
      id: "poison",
      topic: "orchestrator-events",
      data: { x: 1 },
    });
    const [forwarded] = broker.messages("orchestrator-events-deadletter");
    expect(forwarded?.metadata).toMatchObject({ MessageType: "Poison" });
    expect(forwarded?.deadLetterOf).toEqual({
      topic: "orchestrator-events",
      appId: "matoolkit-orchestrator",
    });
    expect(subscriber.deliveries()[0]).toMatchObject({
      outcome: "drop",
      deadLetteredTo: "orchestrator-events-deadletter",
    });
  });

  it("drops a message the app answers with 404 without retrying or dead-lettering it, as daprd 1.16 does", async () => {
    const broker = newBroker();
    const app = await newApp(
      [{ pubsubname: PUBSUB, topic: "t404", route: "/missing", deadLetterTopic: "t404-deadletter" }],
      () => ({ status: 404 }),
    );
    const subscriber = await newSidecar(broker, "subscriber", app);
    const publisher = await newSidecar(broker, "publisher", undefined);
    await publish(publisher, "t404", {}, { "cloudevent.id": "not-found" });

    await app.waitForRequests("/missing", 1);
    await sleep(50);
    expect(app.requests.filter((request) => request.path === "/missing")).toHaveLength(1);
    // daprd 1.16 acknowledges and drops it; only 1.17+ forwards it to the dead-letter topic.
    expect(broker.messages("t404-deadletter")).toEqual([]);
    expect(subscriber.deliveries()).toEqual([
      expect.objectContaining({ outcome: "drop", httpStatus: 404, deadLetteredTo: undefined }),
    ]);
    expect(broker.undelivered()).toEqual([
      expect.objectContaining({
        appId: "subscriber",
        attempts: 1,
        reason: "dropped-on-404",
        message: expect.objectContaining({ cloudEvent: expect.objectContaining({ id: "not-found" }) }),
      }),
    ]);
  });

  it("forwards a message to the dead-letter topic after maxDeliveryAttempts failed deliveries", async () => {
    const broker = newBroker({ maxDeliveryAttempts: 3 });
    const app = await newApp(
      [{ pubsubname: PUBSUB, topic: "failing", route: "/fail", deadLetterTopic: "failing-deadletter" }],
      () => ({ status: 500 }),
    );
    const subscriber = await newSidecar(broker, "subscriber", app);
    const publisher = await newSidecar(broker, "publisher", undefined);
    await publish(publisher, "failing", {}, { "cloudevent.id": "doomed" });

    expect(await broker.waitForMessage("failing-deadletter", (event) => event.id === "doomed")).toMatchObject(
      { topic: "failing" },
    );
    expect(app.requests.filter((request) => request.path === "/fail")).toHaveLength(3);
    expect(
      subscriber
        .deliveries()
        .map((record) => [record.attempt, record.outcome, record.httpStatus, record.deadLetteredTo]),
    ).toEqual([
      [1, "error", 500, undefined],
      [2, "error", 500, undefined],
      [3, "error", 500, "failing-deadletter"],
    ]);
  });

  it("gives up after maxDeliveryAttempts when the subscription has no dead-letter topic", async () => {
    const broker = newBroker({ maxDeliveryAttempts: 2 });
    const app = await newApp([{ pubsubname: PUBSUB, topic: "no-dlt", route: "/fail" }], () => ({
      status: 200,
      body: { status: "RETRY" },
    }));
    await newSidecar(broker, "subscriber", app);
    const publisher = await newSidecar(broker, "publisher", undefined);
    await publish(publisher, "no-dlt", {}, { "cloudevent.id": "lost" });

    await app.waitForRequests("/fail", 2);
    await sleep(50);
    expect(app.requests.filter((request) => request.path === "/fail")).toHaveLength(2);
    expect(broker.undelivered()).toEqual([
      expect.objectContaining({ appId: "subscriber", attempts: 2, reason: "attempts-exhausted" }),
    ]);
  });
});

describe("consumer groups", () => {
  it("gives every app id its own copy and shares one app id's messages between its sidecars", async () => {
    const broker = newBroker();
    const subscription = [{ pubsubname: PUBSUB, topic: "worker-results", route: "/results" }];
    const orchestrator = await newApp(subscription);
    const adminA = await newApp(subscription);
    const adminB = await newApp(subscription);
    await newSidecar(broker, "matoolkit-orchestrator", orchestrator);
    await newSidecar(broker, "matoolkit-admin-api", adminA);
    await newSidecar(broker, "matoolkit-admin-api", adminB);
    const publisher = await newSidecar(broker, "matoolkit-worker", undefined);

    for (let index = 0; index < 10; index += 1) await publish(publisher, "worker-results", { index });

    await orchestrator.waitForRequests("/results", 10);
    const deadline = Date.now() + 5000;
    while (adminA.requests.length + adminB.requests.length < 12 && Date.now() < deadline) await sleep(10);
    const adminIndexes = [...adminA.jsonBodies("/results"), ...adminB.jsonBodies("/results")].map(
      (event) => (event as { data: { index: number } }).data.index,
    );
    expect(adminIndexes.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(adminA.jsonBodies("/results").length).toBeGreaterThan(0);
    expect(adminB.jsonBodies("/results").length).toBeGreaterThan(0);
  });

  it("has several deliveries of one subscription in flight at once", async () => {
    const broker = newBroker();
    let inFlight = 0;
    let maxInFlight = 0;
    const app = await newApp([{ pubsubname: PUBSUB, topic: "parallel", route: "/p" }], async () => {
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await sleep(100);
      inFlight -= 1;
      return { status: 200 };
    });
    await newSidecar(broker, "subscriber", app);
    const publisher = await newSidecar(broker, "publisher", undefined);
    await Promise.all([1, 2, 3, 4].map((n) => publish(publisher, "parallel", { n })));

    await app.waitForRequests("/p", 4);
    expect(maxInFlight).toBeGreaterThanOrEqual(3);
  });

  it("delivers messages published before the subscriber started (durable consumer group)", async () => {
    const broker = newBroker();
    const publisher = await newSidecar(broker, "publisher", undefined);
    await publish(publisher, "early", { early: true });
    const app = await newApp([{ pubsubname: PUBSUB, topic: "early", route: "/early" }]);
    await newSidecar(broker, "late-subscriber", app);
    expect(app.jsonBodies("/early")).toHaveLength(0);
    await app.waitForRequests("/early", 1);
  });
});

describe("message timing", () => {
  it("holds a message until ScheduledEnqueueTimeUtc (HTTP date or RFC 3339), unless the sidecar does not honour it", async () => {
    const broker = newBroker();
    const app = await newApp([
      { pubsubname: PUBSUB, topic: "delayed", route: "/delayed" },
      { pubsubname: PUBSUB, topic: "not-delayed", route: "/not-delayed" },
    ]);
    await newSidecar(broker, "subscriber", app);
    const servicebus = await newSidecar(broker, "publisher", undefined);
    const redis = await newSidecar(broker, "publisher", undefined, { honourScheduledEnqueueTime: false });

    // Whole seconds: both time formats carry second precision.
    const inOneSecond = new Date(Math.ceil(Date.now() / 1000) * 1000 + 1000);
    const published = Date.now();
    await publish(
      servicebus,
      "delayed",
      { format: "http" },
      { ScheduledEnqueueTimeUtc: inOneSecond.toUTCString() },
    );
    await publish(
      servicebus,
      "delayed",
      { format: "rfc3339" },
      { ScheduledEnqueueTimeUtc: inOneSecond.toISOString().replace(".000", "") },
    );
    await publish(redis, "not-delayed", {}, { ScheduledEnqueueTimeUtc: inOneSecond.toUTCString() });

    await app.waitForRequests("/not-delayed", 1);
    expect(app.jsonBodies("/delayed")).toHaveLength(0);
    await app.waitForRequests("/delayed", 2, 5000);
    expect(Date.now()).toBeGreaterThanOrEqual(inOneSecond.getTime() - 5);
    expect(Date.now() - published).toBeGreaterThanOrEqual(900);
  });

  it("rejects an unparsable ScheduledEnqueueTimeUtc like the Service Bus component", async () => {
    const broker = newBroker();
    const publisher = await newSidecar(broker, "publisher", undefined);
    const response = await publish(publisher, "delayed", {}, { ScheduledEnqueueTimeUtc: "tomorrow" });
    expect(response.status).toBe(500);
    expect(await response.json()).toMatchObject({ errorCode: "ERR_PUBSUB_PUBLISH_MESSAGE" });
  });

  it("drops a message whose ttlInSeconds passed before delivery and dead-letters it", async () => {
    const broker = newBroker();
    const publisher = await newSidecar(broker, "publisher", undefined);
    await publish(publisher, "short-lived", {}, { ttlInSeconds: "1", "cloudevent.id": "stale" });
    expect((await broker.waitForMessage("short-lived")).expiration).toEqual(expect.any(String));
    await sleep(1100);

    const app = await newApp([
      { pubsubname: PUBSUB, topic: "short-lived", route: "/late", deadLetterTopic: "short-lived-deadletter" },
    ]);
    const subscriber = await newSidecar(broker, "subscriber", app);
    await broker.waitForMessage("short-lived-deadletter", (event) => event.id === "stale");
    expect(app.jsonBodies("/late")).toHaveLength(0);
    expect(subscriber.deliveries()).toEqual([expect.objectContaining({ outcome: "expired" })]);
  });
});

import { afterEach, describe, expect, it } from "vitest";
import {
  createStandInBroker,
  startStandInSidecar,
  type StandInBroker,
  type StandInSidecar,
} from "./index.ts";
import { startTestApp, type TestApp } from "./test-app.ts";

const PUBSUB = "matoolkit-pubsub";
const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function newBroker(): StandInBroker {
  const broker = createStandInBroker({ redeliveryDelayMs: 10 });
  cleanups.push(() => broker.close());
  return broker;
}

async function newSidecar(broker: StandInBroker, appId: string, app?: TestApp): Promise<StandInSidecar> {
  const sidecar = await startStandInSidecar({
    broker,
    appId,
    ...(app ? { appUrl: app.url } : {}),
    log: () => undefined,
  });
  cleanups.push(() => sidecar.stop());
  await sidecar.ready();
  return sidecar;
}

function bulkPublish(
  sidecar: StandInSidecar,
  topic: string,
  entries: unknown,
  metadata: Record<string, string> = {},
  pubsub = PUBSUB,
): Promise<Response> {
  const query = new URLSearchParams(
    Object.entries(metadata).map(([key, value]): [string, string] => [`metadata.${key}`, value]),
  );
  return fetch(`${sidecar.url}/v1.0-alpha1/publish/bulk/${pubsub}/${topic}?${query}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(entries),
  });
}

describe("bulk publish (POST /v1.0-alpha1/publish/bulk/<pubsub>/<topic>)", () => {
  it("publishes every entry as its own CloudEvent, with the entry's metadata as overrides, and delivers them", async () => {
    const broker = newBroker();
    const app = await startTestApp({
      subscriptions: [{ pubsubname: PUBSUB, topic: "jobs", route: "/jobs" }],
    });
    cleanups.push(() => app.stop());
    await newSidecar(broker, "subscriber", app);
    const publisher = await newSidecar(broker, "publisher");

    const response = await bulkPublish(
      publisher,
      "jobs",
      [
        {
          entryId: "e1",
          event: { JobId: "j-1", WorkerId: "w1" },
          contentType: "application/json",
          metadata: { "cloudevent.id": "m-1", "cloudevent.type": "worker-job", WorkerId: "w1" },
        },
        {
          entryId: "e2",
          event: "plain text",
          contentType: "text/plain",
          metadata: { "cloudevent.id": "m-2" },
        },
        // No metadata of its own: daprd applies none, not even the request's.
        { entryId: "e3", event: { n: 3 }, contentType: "application/json" },
      ],
      { Shared: "from-request" },
    );
    expect(response.status).toBe(204);

    const messages = broker.messages("jobs");
    expect(messages.map((message) => message.cloudEvent.id).slice(0, 2)).toEqual(["m-1", "m-2"]);
    expect(messages[0]).toMatchObject({
      cloudEvent: {
        type: "worker-job",
        source: "publisher",
        datacontenttype: "application/json",
        data: { JobId: "j-1", WorkerId: "w1" },
        topic: "jobs",
        pubsubname: PUBSUB,
      },
      metadata: { WorkerId: "w1", Shared: "from-request", "cloudevent.id": "m-1" },
    });
    expect(messages[1]?.cloudEvent).toMatchObject({ data: "plain text", datacontenttype: "text/plain" });
    expect(messages[2]?.cloudEvent.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(messages[2]?.metadata).toEqual({});

    const delivered = await app.waitForRequests("/jobs", 3);
    expect(delivered.map((request) => (JSON.parse(request.body) as { id: string }).id).sort()).toEqual(
      ["m-1", "m-2", messages[2]!.cloudEvent.id].sort(),
    );
  });

  it("is not atomic: a refused entry is listed in failedEntries with 500, the others are published", async () => {
    const broker = newBroker();
    const publisher = await newSidecar(broker, "publisher");
    broker.failNextPublish("m-2", "queue quota exceeded");

    const entries = ["m-1", "m-2", "m-3"].map((id) => ({
      entryId: `entry-${id}`,
      event: { id },
      contentType: "application/json",
      metadata: { "cloudevent.id": id },
    }));
    const response = await bulkPublish(publisher, "jobs", entries);
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({
      failedEntries: [{ entryId: "entry-m-2", error: "queue quota exceeded" }],
      errorCode: "ERR_PUBSUB_PUBLISH_MESSAGE",
    });
    expect(broker.messages("jobs").map((message) => message.cloudEvent.id)).toEqual(["m-1", "m-3"]);

    // The fault is used up: publishing the failed entry again succeeds.
    expect((await bulkPublish(publisher, "jobs", [entries[1]])).status).toBe(204);
    expect(broker.messages("jobs").map((message) => message.cloudEvent.id)).toEqual(["m-1", "m-3", "m-2"]);
  });

  it("refuses the whole request, publishing nothing, for a missing or duplicated entryId or an event that does not match its contentType", async () => {
    const broker = newBroker();
    const publisher = await newSidecar(broker, "publisher");
    const ok = { entryId: "a", event: {}, contentType: "application/json" };

    for (const entries of [
      [ok, { event: {}, contentType: "application/json" }],
      [ok, { ...ok }],
      [ok, { entryId: "b", event: { not: "text" }, contentType: "text/plain" }],
      [ok, { entryId: "b", event: {} }],
      { not: "an array" },
    ]) {
      const response = await bulkPublish(publisher, "jobs", entries);
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ errorCode: "ERR_PUBSUB_EVENTS_SER" });
    }
    expect(broker.messages("jobs")).toEqual([]);
  });

  it("answers an unknown pub/sub with 404 ERR_PUBSUB_NOT_FOUND", async () => {
    const publisher = await newSidecar(newBroker(), "publisher");
    const response = await bulkPublish(publisher, "jobs", [], {}, "no-such-pubsub");
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ errorCode: "ERR_PUBSUB_NOT_FOUND" });
  });

  it("holds an entry until its ScheduledEnqueueTimeUtc, and fails only an entry whose time does not parse", async () => {
    const broker = newBroker();
    const publisher = await newSidecar(broker, "publisher");
    const later = new Date(Math.ceil(Date.now() / 1000) * 1000 + 60_000);

    const response = await bulkPublish(publisher, "delayed", [
      {
        entryId: "later",
        event: {},
        contentType: "application/json",
        metadata: { "cloudevent.id": "later", ScheduledEnqueueTimeUtc: later.toUTCString() },
      },
      {
        entryId: "bad",
        event: {},
        contentType: "application/json",
        metadata: { "cloudevent.id": "bad", ScheduledEnqueueTimeUtc: "tomorrow" },
      },
    ]);
    expect(response.status).toBe(500);
    const body = (await response.json()) as { failedEntries: Array<{ entryId: string }> };
    expect(body.failedEntries.map((entry) => entry.entryId)).toEqual(["bad"]);
    const [held] = broker.messages("delayed");
    expect(held?.cloudEvent.id).toBe("later");
    expect(held?.visibleAt.toISOString()).toBe(later.toISOString());
  });
});

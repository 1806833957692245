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

async function newSidecar(
  broker: StandInBroker,
  appId: string,
  app?: TestApp,
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

  it("holds an entry until its ScheduledEnqueueTimeUtc; under Service Bus one entry whose time does not parse fails the whole request", async () => {
    const broker = newBroker();
    const publisher = await newSidecar(broker, "publisher");
    const later = new Date(Math.ceil(Date.now() / 1000) * 1000 + 60_000);
    const laterEntry = {
      entryId: "later",
      event: {},
      contentType: "application/json",
      metadata: { "cloudevent.id": "later", ScheduledEnqueueTimeUtc: later.toUTCString() },
    };

    const response = await bulkPublish(publisher, "delayed", [
      laterEntry,
      {
        entryId: "bad",
        event: {},
        contentType: "application/json",
        metadata: { "cloudevent.id": "bad", ScheduledEnqueueTimeUtc: "tomorrow" },
      },
    ]);
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({
      failedEntries: ["later", "bad"].map((entryId) => ({
        entryId,
        error: "invalid time format for ScheduledEnqueueTimeUtc; expected HTTP time format or RFC3339",
      })),
      errorCode: "ERR_PUBSUB_PUBLISH_MESSAGE",
    });
    expect(broker.messages("delayed")).toEqual([]);

    expect((await bulkPublish(publisher, "delayed", [laterEntry])).status).toBe(204);
    const [held] = broker.messages("delayed");
    expect(held?.cloudEvent.id).toBe("later");
    expect(held?.visibleAt.toISOString()).toBe(later.toISOString());
  });

  describe("Service Bus's 128 KiB batch (honourScheduledEnqueueTime)", () => {
    /** `count` JSON entries of about `kib` KiB each. */
    const entries = (count: number, kib: number, prefix = "e") =>
      Array.from({ length: count }, (_, index) => ({
        entryId: `${prefix}-${index}`,
        event: { index, padding: "x".repeat(kib * 1024) },
        contentType: "application/json",
        metadata: { "cloudevent.id": `${prefix}-${index}` },
      }));

    it("fails a bulk publish whose entries together exceed 128 KiB whole: 500, every entry failed, nothing published", async () => {
      const broker = newBroker();
      const publisher = await newSidecar(broker, "publisher");
      const metadata = (await (await fetch(`${publisher.url}/v1.0/metadata`)).json()) as {
        components: Array<{ name: string; type: string }>;
      };
      expect(metadata.components).toContainEqual(
        expect.objectContaining({ name: PUBSUB, type: "pubsub.azure.servicebus.topics" }),
      );

      // 5 × 30 KiB = 150 KiB: each entry alone is fine, together they do not fit.
      const tooMuch = entries(5, 30);
      const response = await bulkPublish(publisher, "big", tooMuch);
      expect(response.status).toBe(500);
      expect(await response.json()).toEqual({
        failedEntries: tooMuch.map(({ entryId }) => ({
          entryId,
          error: "the message could not be added because it is too large for the batch",
        })),
        errorCode: "ERR_PUBSUB_PUBLISH_MESSAGE",
      });
      expect(broker.messages("big")).toEqual([]);

      // The same entries in requests that fit go through.
      expect((await bulkPublish(publisher, "big", tooMuch.slice(0, 3))).status).toBe(204);
      expect((await bulkPublish(publisher, "big", tooMuch.slice(3))).status).toBe(204);
      expect(broker.messages("big")).toHaveLength(5);
    });

    it("counts the CloudEvents daprd builds, not just the events: many small entries near the limit fail too", async () => {
      const broker = newBroker();
      const publisher = await newSidecar(broker, "publisher");
      // 120 × 1 KiB of event data is under 128 KiB, but each CloudEvent envelope and its
      // application properties add several hundred bytes more.
      const response = await bulkPublish(publisher, "many", entries(120, 1));
      expect(response.status).toBe(500);
      expect(((await response.json()) as { failedEntries: unknown[] }).failedEntries).toHaveLength(120);
      expect((await bulkPublish(publisher, "many", entries(60, 1))).status).toBe(204);
    });

    it("takes the limit from the request's maxBulkPubBytes metadata", async () => {
      const broker = newBroker();
      const publisher = await newSidecar(broker, "publisher");
      expect(
        (await bulkPublish(publisher, "big", entries(5, 30), { maxBulkPubBytes: String(256 * 1024) })).status,
      ).toBe(204);
      expect(
        (await bulkPublish(publisher, "big", entries(2, 1, "f"), { maxBulkPubBytes: "1024" })).status,
      ).toBe(500);
    });

    it("does not apply without Service Bus: other components publish entry by entry", async () => {
      const broker = newBroker();
      const publisher = await newSidecar(broker, "publisher", undefined, {
        honourScheduledEnqueueTime: false,
      });
      expect((await bulkPublish(publisher, "big", entries(5, 30))).status).toBe(204);
      expect(broker.messages("big")).toHaveLength(5);
    });
  });
});

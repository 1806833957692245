import { afterEach, describe, expect, it } from "vitest";
import {
  createStandInBroker,
  startStandInSidecar,
  type StandInBroker,
  type StandInSidecar,
} from "./index.ts";
import { startTestApp, type TestApp } from "./test-app.ts";

/**
 * W3C trace context on CloudEvents, as daprd sets it: publish metadata `cloudevent.traceparent`
 * and `cloudevent.tracestate` override it (single and bulk publish, per entry), else the
 * request's `traceparent` header is used, else a new trace starts. The delivered CloudEvent
 * carries it as `traceparent`/`tracestate` (and `traceid`, Dapr's older name).
 */
const PUBSUB = "matoolkit-pubsub";
const TOPIC = "orchestrator-events";
const ROUTE = "/dapr/topics/orchestrator-events/orchestrator";
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function open(): Promise<{ broker: StandInBroker; app: TestApp; sidecar: StandInSidecar }> {
  const broker = createStandInBroker({ redeliveryDelayMs: 10 });
  cleanups.push(() => broker.close());
  const app = await startTestApp({ subscriptions: [{ pubsubname: PUBSUB, topic: TOPIC, route: ROUTE }] });
  cleanups.push(() => app.stop());
  const sidecar = await startStandInSidecar({
    broker,
    appId: "tracing",
    appUrl: app.url,
    log: () => undefined,
  });
  cleanups.push(() => sidecar.stop());
  await sidecar.ready();
  return { broker, app, sidecar };
}

const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const other = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

describe("trace context of published CloudEvents", () => {
  it("takes cloudevent.traceparent/tracestate metadata over the request header", async () => {
    const { app, sidecar } = await open();
    const query = new URLSearchParams({
      "metadata.cloudevent.id": "m-1",
      "metadata.cloudevent.traceparent": parent,
      "metadata.cloudevent.tracestate": "congo=t61rcWkgMzE",
    });
    const response = await fetch(`${sidecar.url}/v1.0/publish/${PUBSUB}/${TOPIC}?${query}`, {
      method: "POST",
      headers: { "content-type": "application/json", traceparent: other },
      body: JSON.stringify({ n: 1 }),
    });
    expect(response.status).toBe(204);
    const [delivered] = await app.waitForRequests(ROUTE, 1);
    expect(JSON.parse(delivered!.body)).toMatchObject({
      id: "m-1",
      traceparent: parent,
      traceid: parent,
      tracestate: "congo=t61rcWkgMzE",
    });
  });

  it("uses the request's traceparent header without an override", async () => {
    const { app, sidecar } = await open();
    await fetch(`${sidecar.url}/v1.0/publish/${PUBSUB}/${TOPIC}?metadata.cloudevent.id=m-2`, {
      method: "POST",
      headers: { "content-type": "application/json", traceparent: other },
      body: "{}",
    });
    const [delivered] = await app.waitForRequests(ROUTE, 1);
    expect(JSON.parse(delivered!.body)).toMatchObject({ id: "m-2", traceparent: other, tracestate: "" });
  });

  it("sets each bulk entry's own trace context from its metadata", async () => {
    const { app, sidecar } = await open();
    const entry = (entryId: string, traceparent: string) => ({
      entryId,
      event: { entryId },
      contentType: "application/json",
      metadata: { "cloudevent.id": entryId, "cloudevent.traceparent": traceparent },
    });
    const response = await fetch(`${sidecar.url}/v1.0-alpha1/publish/bulk/${PUBSUB}/${TOPIC}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify([entry("b-1", parent), entry("b-2", other)]),
    });
    expect(response.status).toBe(204);
    const delivered = (await app.waitForRequests(ROUTE, 2)).map((request) => JSON.parse(request.body));
    expect(delivered.map((event) => [event.id, event.traceparent]).sort()).toEqual([
      ["b-1", parent],
      ["b-2", other],
    ]);
  });
});

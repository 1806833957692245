import { freePort } from "@matoolkit/dapr-harness/free-port";
import { randomUUID } from "node:crypto";
import { topics } from "@matoolkit/domain";
import { createStandInBroker, startStandInSidecar, type StandInBroker } from "@matoolkit/dapr-stand-in";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createLogger } from "../logger.ts";
import type { Delivery, OutgoingMessage } from "../ports/index.ts";
import { createDaprRuntime } from "./create-dapr-runtime.ts";

/**
 * publishMany through Dapr's bulk publish API, against the stand-in sidecar: what the contract
 * suite cannot provoke (a broker refusing part of a bulk).
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

const logger = createLogger({ level: "silent", name: "dapr-bus-test" });
const waitUntil = (assertion: () => void | Promise<void>) =>
  vi.waitFor(assertion, { timeout: 10_000, interval: 25 });

async function openBus(appId: string, sidecarLog: string[] = [], bulkPublish?: boolean) {
  const appPort = await freePort();
  const sidecar = await startStandInSidecar({
    broker,
    appId,
    appUrl: `http://127.0.0.1:${appPort}`,
    log: (_level, line) => void sidecarLog.push(line),
  });
  const runtime = await createDaprRuntime({
    sidecar: { httpEndpoint: sidecar.url },
    app: { host: "127.0.0.1", port: appPort },
    pubsubName: "matoolkit-pubsub",
    stateStoreName: "matoolkit-state",
    jobsApiVersion: "v1.0-alpha1",
    db: database.db,
    logger,
    dedupeWindowSeconds: 600,
    ports: { bus: true, timers: "dapr-jobs", idempotency: false },
    ...(bulkPublish === undefined ? {} : { bulkPublish }),
  });
  cleanups.push(async () => {
    await runtime.stop();
    await sidecar.stop();
  });
  return { bus: runtime.bus!, runtime, sidecar };
}

/** A bus subscribed to orchestrator-events, started, and three messages sent in one publishMany. */
async function publishThreeThrough(appId: string, bulkPublish?: boolean) {
  broker = createStandInBroker({ redeliveryDelayMs: 20 });
  const sidecarLog: string[] = [];
  const { bus, runtime, sidecar } = await openBus(appId, sidecarLog, bulkPublish);
  const deliveries: Delivery[] = [];
  await bus.subscribe({ topic: topics.orchestratorEvents, name: "orchestrator" }, async (delivery) => {
    deliveries.push(delivery);
  });
  await runtime.start();
  await sidecar.ready();
  const ids = [randomUUID(), randomUUID(), randomUUID()];
  await bus.publishMany(
    ids.map((id, n) => ({
      id,
      topic: topics.orchestratorEvents,
      properties: { MessageType: "phase-due" },
      body: { n },
    })),
  );
  return { sidecarLog, deliveries, ids };
}

/**
 * A call of three messages (two topics) of which the broker refuses the second, then the whole
 * call published again, as callers do after a throw: returns the first call's error, what the
 * broker holds, and what the subscribers handled.
 */
async function publishRefusedThenAgain(appId: string, bulkPublish?: boolean) {
  broker = createStandInBroker({ redeliveryDelayMs: 20 });
  const { bus, runtime, sidecar } = await openBus(appId, [], bulkPublish);
  const handled: string[] = [];
  for (const topic of [topics.workerResults, topics.orchestratorEvents]) {
    await bus.subscribe({ topic, name: "orchestrator" }, async (delivery) => {
      handled.push(delivery.id);
    });
  }
  await runtime.start();
  await sidecar.ready();

  const messages: OutgoingMessage[] = [
    topics.workerResults,
    topics.workerResults,
    topics.orchestratorEvents,
  ].map((topic) => ({ id: randomUUID(), topic, properties: {}, body: {} }));
  broker.failNextPublish(messages[1]!.id, "quota exceeded for jdoe@contoso.com");
  const failure = await bus.publishMany(messages).then(
    () => undefined,
    (error: unknown) => error as Error,
  );
  const brokerIds = () =>
    [topics.workerResults, topics.orchestratorEvents].flatMap((topic) =>
      broker.messages(topic).map((message) => message.cloudEvent.id),
    );
  const firstCall = brokerIds();
  await bus.publishMany(messages);
  const ids = messages.map((message) => message.id);
  await waitUntil(() => expect([...new Set(handled)].sort()).toEqual([...ids].sort()));
  // The copies of the first call's messages arrive too: give them time to be (not) handled.
  await new Promise((resolve) => setTimeout(resolve, 300));
  return { failure, ids, firstCall, brokerIds: brokerIds(), handled };
}

describe("Dapr bus publishMany (bulk publish)", () => {
  it("sends a call's immediate messages in one bulk request, with our ids and types as CloudEvent attributes", async () => {
    const { sidecarLog, deliveries, ids } = await publishThreeThrough("bulk-app");

    expect(sidecarLog.filter((line) => line.startsWith("bulk published"))).toEqual([
      `bulk published 3 of 3 CloudEvents to matoolkit-pubsub/${topics.orchestratorEvents}`,
    ]);
    const published = broker.messages(topics.orchestratorEvents);
    expect(published.map((message) => [message.cloudEvent.id, message.cloudEvent.type])).toEqual(
      ids.map((id) => [id, "phase-due"]),
    );
    await waitUntil(() => expect(deliveries.map((delivery) => delivery.id).sort()).toEqual([...ids].sort()));
    expect(deliveries.map((delivery) => delivery.properties)).toEqual(
      ids.map(() => ({ MessageType: "phase-due" })),
    );
  });

  it("throws when the broker refuses part of a bulk; after the retried call each message is handled once", async () => {
    const { failure, ids, firstCall, brokerIds, handled } = await publishRefusedThenAgain("bulk-partial");
    expect(failure?.message).toMatch(/bulk publish to worker-results failed for 1 of 2 messages/);
    // The component's error text may quote payloads: it is not carried into ours.
    expect(failure?.message).not.toContain("jdoe@contoso.com");
    expect(firstCall.sort()).toEqual([ids[0]!, ids[2]!].sort());
    // The retried call goes out whole; the subscribers' ledgers drop the two copies.
    expect(brokerIds.sort()).toEqual([ids[0]!, ids[0]!, ids[1]!, ids[2]!, ids[2]!].sort());
    expect(handled.sort()).toEqual([...ids].sort());
  });
});

/**
 * bulkPublish false (the aca runtime: Azure Container Apps does not guarantee Dapr's alpha APIs,
 * learn.microsoft.com/azure/container-apps/dapr-overview): publishMany uses only the stable
 * publish API, with the same partial-failure contract as the bulk one.
 */
describe("Dapr bus publishMany without the bulk API", () => {
  it("publishes each message through /v1.0/publish, never the alpha bulk API", async () => {
    const { sidecarLog, deliveries, ids } = await publishThreeThrough("single-app", false);

    expect(sidecarLog.filter((line) => line.startsWith("bulk"))).toEqual([]);
    expect(sidecarLog.filter((line) => line.startsWith("published CloudEvent")).sort()).toEqual(
      ids.map((id) => `published CloudEvent ${id} to matoolkit-pubsub/${topics.orchestratorEvents}`).sort(),
    );
    expect(
      broker
        .messages(topics.orchestratorEvents)
        .map((message) => [message.cloudEvent.id, message.cloudEvent.type])
        .sort(),
    ).toEqual(ids.map((id) => [id, "phase-due"]).sort());
    await waitUntil(() => expect(deliveries.map((delivery) => delivery.id).sort()).toEqual([...ids].sort()));
  });

  it("throws when one publish fails; after the retried call each message is handled once", async () => {
    const { failure, ids, firstCall, handled } = await publishRefusedThenAgain("single-partial", false);
    expect(failure?.message).toMatch(/pubsub\.publish/);
    // The component's error text may quote payloads: only Dapr's error code is carried.
    expect(failure?.message).not.toContain("jdoe@contoso.com");
    expect(firstCall.sort()).toEqual([ids[0]!, ids[2]!].sort());
    expect(handled.sort()).toEqual([...ids].sort());
  });
});

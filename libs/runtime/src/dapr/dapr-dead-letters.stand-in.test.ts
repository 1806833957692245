import { freePort } from "@matoolkit/dapr-harness/free-port";
import { randomUUID } from "node:crypto";
import { MatoolkitError, reasonCodes, topics } from "@matoolkit/domain";
import { createStandInBroker, startStandInSidecar, type StandInBroker } from "@matoolkit/dapr-stand-in";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createLogger } from "../logger.ts";
import { createDaprRuntime } from "./create-dapr-runtime.ts";
import { DAPR_DEAD_LETTER_REASON } from "./dead-letter-intake.ts";

/**
 * Messages daprd dead-letters without the app's verdict (issue 14, finding 6): the app cannot take
 * the delivery, daprd retries, forwards it to `<topic>-deadletter` and acknowledges the broker.
 * They must still show in `bus.deadLetters()`, once.
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

const logger = createLogger({ level: "silent", name: "dapr-dead-letters-test" });
const waitUntil = (assertion: () => void | Promise<void>) =>
  vi.waitFor(assertion, { timeout: 10_000, interval: 25 });
const subscription = { topic: topics.orchestratorEvents, name: "orchestrator" } as const;

async function openSubscriber(appId: string, stateStores: string[]) {
  const appPort = await freePort();
  const sidecar = await startStandInSidecar({
    broker,
    appId,
    appUrl: `http://127.0.0.1:${appPort}`,
    stateStores,
    log: () => undefined,
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
  });
  cleanups.push(async () => {
    await runtime.stop();
    await sidecar.stop();
  });
  return { bus: runtime.bus!, sidecar, start: () => runtime.start() };
}

/** Publishes through a sidecar of its own, as another service would. */
async function publishFromElsewhere(id: string, body: unknown): Promise<void> {
  const publisher = await startStandInSidecar({ broker, appId: "publisher", log: () => undefined });
  cleanups.push(() => publisher.stop());
  await publisher.ready();
  const response = await fetch(
    `${publisher.url}/v1.0/publish/matoolkit-pubsub/${topics.orchestratorEvents}?metadata.cloudevent.id=${id}`,
    { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) },
  );
  expect(response.status).toBe(204);
}

describe("messages Dapr dead-letters on its own", () => {
  it("are recorded in the app's dead-letter table when the app failed every delivery before its handler ran", async () => {
    broker = createStandInBroker({ maxDeliveryAttempts: 3, redeliveryDelayMs: 10 });
    // The sidecar has no matoolkit-state: the delivery ledger fails, every delivery answers 500.
    const { bus, sidecar, start } = await openSubscriber("dlq-app", ["some-other-store"]);
    let handled = 0;
    await bus.subscribe(subscription, async () => void (handled += 1));
    await start();
    await sidecar.ready();

    const id = randomUUID();
    await publishFromElsewhere(id, { BatchId: 7 });

    await waitUntil(async () =>
      expect((await bus.deadLetters(subscription)).filter((letter) => letter.id === id)).toEqual([
        expect.objectContaining({
          id,
          subscription: "orchestrator",
          body: { BatchId: 7 },
          error: DAPR_DEAD_LETTER_REASON,
        }),
      ]),
    );
    expect(handled).toBe(0);
    expect(broker.messages(`${topics.orchestratorEvents}-deadletter`)).toHaveLength(1);
  });

  it("keep the app's own reason, once, when the app dead-lettered the message itself", async () => {
    broker = createStandInBroker({ maxDeliveryAttempts: 3, redeliveryDelayMs: 10 });
    const { bus, sidecar, start } = await openSubscriber("dlq-own-app", ["matoolkit-state"]);
    await bus.subscribe(subscription, async () => {
      throw new MatoolkitError(reasonCodes.messageInvalid, "no such batch", { retriable: false });
    });
    await start();
    await sidecar.ready();

    const id = randomUUID();
    await publishFromElsewhere(id, { BatchId: 8 });

    // The copy on the dead-letter topic reached the app and was acknowledged.
    await waitUntil(() =>
      expect(
        sidecar
          .deliveries()
          .filter((d) => d.topic === `${topics.orchestratorEvents}-deadletter` && d.outcome === "success"),
      ).toHaveLength(1),
    );
    // The table is shared by the tests of this file: only this message's rows count.
    const letters = (await bus.deadLetters(subscription)).filter((letter) => letter.id === id);
    expect(letters).toHaveLength(1);
    expect(letters[0]).toMatchObject({ id, deliveryCount: 1 });
    expect(letters[0]?.error).toContain("no such batch");
  });
});

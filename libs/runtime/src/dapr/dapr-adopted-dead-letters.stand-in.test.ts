import { freePort } from "@matoolkit/dapr-harness/free-port";
import { randomUUID } from "node:crypto";
import { MatoolkitError, reasonCodes, topics } from "@matoolkit/domain";
import { createStandInBroker, startStandInSidecar, type StandInBroker } from "@matoolkit/dapr-stand-in";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createLogger } from "../logger.ts";
import { workerJobsSubscription } from "../topology.ts";
import { createDaprRuntime } from "./create-dapr-runtime.ts";
import { ADOPTED_DEAD_LETTER_REASON } from "./dead-letter-intake.ts";

/**
 * The worker on Dapr has no database (000: no SQL access): what it dead-letters is logged and
 * forwarded by Dapr to `worker-jobs-deadletter`, where the orchestrator, which has one, adopts it.
 */
let database: TestDatabase;
let broker: StandInBroker;
const cleanups: Array<() => Promise<void>> = [];
beforeAll(async () => {
  database = await createTestDatabase();
  broker = createStandInBroker({ maxDeliveryAttempts: 3, redeliveryDelayMs: 10 });
});
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  broker?.close();
  await database?.drop();
});

const logger = createLogger({ level: "silent", name: "dapr-adopted-dead-letters-test" });

async function openApp(appId: string, options: { db?: TestDatabase["db"]; adopt?: boolean }) {
  const appPort = await freePort();
  const sidecar = await startStandInSidecar({
    broker,
    appId,
    appUrl: `http://127.0.0.1:${appPort}`,
    log: () => undefined,
  });
  const runtime = await createDaprRuntime({
    sidecar: { httpEndpoint: sidecar.url },
    app: { host: "127.0.0.1", port: appPort },
    pubsubName: "matoolkit-pubsub",
    stateStoreName: "matoolkit-state",
    jobsApiVersion: "v1.0-alpha1",
    ...(options.db === undefined ? {} : { db: options.db }),
    ...(options.adopt === true ? { adoptWorkerJobDeadLetters: true } : {}),
    logger,
    dedupeWindowSeconds: 600,
    ports: { bus: true, timers: "dapr-jobs", idempotency: true },
  });
  cleanups.push(async () => {
    await runtime.stop();
    await sidecar.stop();
  });
  return { bus: runtime.bus!, sidecar, start: () => runtime.start() };
}

describe("dead letters of an app without a database (the worker on Dapr)", () => {
  it("are recorded by the app that adopts the topic's dead letters, under the worker's subscription", async () => {
    const subscription = workerJobsSubscription("w-adopt");
    const worker = await openApp("matoolkit-worker", {});
    let attempts = 0;
    await worker.bus.subscribe(subscription, async () => {
      attempts += 1;
      throw new MatoolkitError(reasonCodes.messageInvalid, "not a worker job", { retriable: false });
    });
    const orchestrator = await openApp("matoolkit-orchestrator", { db: database.db, adopt: true });
    await worker.start();
    await orchestrator.start();
    await worker.sidecar.ready();
    await orchestrator.sidecar.ready();

    const id = randomUUID();
    const response = await fetch(
      `${orchestrator.sidecar.url}/v1.0/publish/matoolkit-pubsub/${topics.workerJobs}?metadata.cloudevent.id=${id}`,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ WorkerId: "w-adopt", Junk: true }),
      },
    );
    expect(response.status).toBe(204);

    await vi.waitFor(
      async () =>
        expect(await orchestrator.bus.deadLetters(subscription)).toEqual([
          expect.objectContaining({
            id,
            topic: topics.workerJobs,
            subscription: "worker-w-adopt",
            body: { WorkerId: "w-adopt", Junk: true },
            error: ADOPTED_DEAD_LETTER_REASON,
          }),
        ]),
      { timeout: 10_000, interval: 25 },
    );
    // The worker ran it once (non-retriable: dropped at once) and was never asked about the copy.
    expect(attempts).toBe(1);
    expect(
      worker.sidecar.deliveries().filter((delivery) => delivery.topic === `${topics.workerJobs}-deadletter`),
    ).toEqual([]);
    // It has nowhere to list dead letters: it says where they are instead of answering "none".
    await expect(worker.bus.deadLetters(subscription)).rejects.toThrow(/no database/);
  });
});

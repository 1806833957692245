import { freePort } from "@matoolkit/dapr-harness/free-port";
import { topics } from "@matoolkit/domain";
import { createStandInBroker, startStandInSidecar, type StandInBroker } from "@matoolkit/dapr-stand-in";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createLogger } from "../logger.ts";
import type { OutgoingMessage } from "../ports/index.ts";
import { createDaprAppServer } from "./dapr-app-server.ts";
import { createDaprHttp } from "./dapr-http.ts";
import { createDaprJobsClient } from "./dapr-jobs-client.ts";
import { createDaprJobsTimers } from "./dapr-jobs-timers.ts";
import { createDaprStateStore } from "./dapr-state-store.ts";

/**
 * Delayed deliveries on the Jobs API against the stand-in Scheduler, which applies Dapr's default
 * failure policy (3 retries 1 s apart, then dropped) to a job that sets none.
 */
const logger = createLogger({ level: "silent", name: "dapr-jobs-timers-test" });
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function openJobsTimers(broker: StandInBroker, appId: string) {
  const appPort = await freePort();
  const sidecar = await startStandInSidecar({
    broker,
    appId,
    appUrl: `http://127.0.0.1:${appPort}`,
    log: () => undefined,
  });
  const http = createDaprHttp({ httpEndpoint: sidecar.url });
  const app = createDaprAppServer({ host: "127.0.0.1", port: appPort, logger });
  const timers = createDaprJobsTimers({
    jobs: createDaprJobsClient(http, "v1.0-alpha1"),
    app,
    state: createDaprStateStore(http, "matoolkit-state"),
    logger,
    deliveryRetryIntervalMs: 100,
  });
  await app.listen();
  await sidecar.ready();
  cleanups.push(async () => {
    await timers.stop();
    await sidecar.stop();
    await app.close();
  });
  return timers;
}

describe("Dapr Jobs timers: delayed deliveries", () => {
  it("keeps re-triggering a delayed message whose publish fails past Dapr's default retries, until it is published", async () => {
    const broker = createStandInBroker();
    cleanups.push(() => broker.close());
    const timers = await openJobsTimers(broker, "matoolkit-orchestrator");

    // The broker is down for longer than Dapr's default policy (1 trigger + 3 retries) covers.
    const failuresBeforeRecovery = 6;
    let publishAttempts = 0;
    const published: OutgoingMessage[] = [];
    timers.attachPublisher(async (message) => {
      publishAttempts += 1;
      if (publishAttempts <= failuresBeforeRecovery) throw new Error("pub/sub unavailable");
      published.push(message);
    });

    const message = {
      id: "retry-check:step-1:1",
      topic: topics.orchestratorEvents,
      properties: { MessageType: "RetryCheck" },
      body: { stepId: "step-1" },
      deliverAt: new Date(Date.now() + 50),
    };
    await timers.deliverLater(message, async () => undefined);

    // The job ends either way: published, or dropped by its failure policy.
    await vi.waitFor(
      () => {
        expect(broker.jobTriggers("matoolkit-orchestrator").length).toBeGreaterThan(0);
        expect(broker.jobs("matoolkit-orchestrator")).toEqual([]);
      },
      { timeout: 15_000, interval: 25 },
    );
    expect(published.map(({ id, topic, body }) => ({ id, topic, body }))).toEqual([
      { id: message.id, topic: message.topic, body: message.body },
    ]);
    expect(broker.jobTriggers("matoolkit-orchestrator").map((trigger) => trigger.outcome)).toEqual([
      ...Array.from({ length: failuresBeforeRecovery }, () => "failure"),
      "success",
    ]);
  });
});

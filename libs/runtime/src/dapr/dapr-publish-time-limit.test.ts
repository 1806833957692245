import { topics } from "@matoolkit/domain";
import { describe, expect, it } from "vitest";
import { createLogger } from "../logger.ts";
import { createDaprAppServer } from "./dapr-app-server.ts";
import type { DaprHttp, DaprRequest } from "./dapr-http.ts";
import { createDaprMessageBus, PUBLISH_TIMEOUT_MS } from "./dapr-message-bus.ts";
import { createDaprStateStore } from "./dapr-state-store.ts";
import { createDeliveryLedger } from "./delivery-ledger.ts";

/**
 * How long the bus lets a publish take. daprd retries a publish toward the broker for its whole
 * outbound window (dapr/resources/resiliency.yaml `publishRetry`: up to 6 attempts of at most
 * `componentCall` 10 s, plus backoff: ~75 s); a client that gives up first (the HTTP client's
 * default is 30 s) reports a failure for a message that may still go out, and the outbox then
 * publishes it again. A recording sidecar: only what the bus asks is under test here.
 */
const logger = createLogger({ level: "silent", name: "dapr-publish-time-limit" });

function recordingSidecar(): { http: DaprHttp; requests: DaprRequest[] } {
  const requests: DaprRequest[] = [];
  return {
    requests,
    http: {
      address: { httpEndpoint: "http://127.0.0.1:1" },
      async request(request) {
        requests.push(request);
        // State reads: absent; writes and publishes: accepted.
        return new Response(null, { status: 204 });
      },
    },
  };
}

describe("Dapr bus: publish time limit", () => {
  it("gives single and bulk publishes more time than daprd's whole outbound retry window", async () => {
    const { http, requests } = recordingSidecar();
    const state = createDaprStateStore(http, "matoolkit-state");
    const bus = await createDaprMessageBus({
      http,
      app: createDaprAppServer({ host: "127.0.0.1", port: 0, logger }),
      pubsubName: "matoolkit-pubsub",
      ledger: createDeliveryLedger({ state, rememberSeconds: 600, leaseSeconds: 60 }),
      deliverLater: async () => undefined,
      logger,
    });
    const message = (id: string) => ({
      id,
      topic: topics.workerJobs,
      properties: { MessageType: "job", WorkerId: "worker-01" },
      body: { JobId: id },
    });
    await bus.publish(message("job:step-1"));
    await bus.publishMany([message("job:step-2"), message("job:step-3")]);

    const publishes = requests.filter((request) => request.operation.startsWith("pubsub."));
    expect(publishes.map((request) => request.operation)).toEqual(["pubsub.publish", "pubsub.publishBulk"]);
    // ~75 s is daprd's worst case under the shipped resiliency policy.
    expect(PUBLISH_TIMEOUT_MS).toBeGreaterThan(75_000);
    for (const publish of publishes) expect(publish.timeoutMs).toBe(PUBLISH_TIMEOUT_MS);
    // The single publish carries the CloudEvent id and the routing properties as metadata.
    expect(publishes[0]!.query).toMatchObject({
      "metadata.cloudevent.id": "job:step-1",
      "metadata.WorkerId": "worker-01",
    });
    await bus.stop?.();
  });
});

import { randomUUID } from "node:crypto";
import { topics } from "@matoolkit/domain";
import { createTestDatabase } from "@matoolkit/testing";
import type { TestDatabase } from "@matoolkit/testing";
import { sql } from "kysely";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { openEmbeddedBus, type OpenedBus } from "../../test/embedded/open-embedded-bus.ts";
import type { Delivery, MessageBus } from "../ports/index.ts";
import { createPostgresIdempotencyStore } from "./postgres-idempotency-store.ts";
import { subscriptionQueue } from "./queue-names.ts";

// MessageBus.settleDelivery on the embedded bus: a handler's record, publish and acknowledgement
// in one transaction (issue 29), all on a real PostgreSQL.
let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.drop();
});

const opened: OpenedBus[] = [];
afterEach(async () => {
  for (const { close } of opened.splice(0)) await close();
});

async function open(): Promise<MessageBus> {
  const opening = await openEmbeddedBus(database);
  opened.push(opening);
  return opening.bus;
}

const unique = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;
const waitUntil = (assertion: () => void | Promise<void>) =>
  vi.waitFor(assertion, { timeout: 10_000, interval: 25 });
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const claimOptions = { ttlSeconds: 60, leaseSeconds: 30, owner: "reader" };

/** A job topic whose handler settles with `settle`, and a result topic that collects what it publishes. */
async function jobAndResults(
  bus: MessageBus,
  settle: (delivery: Delivery) => Promise<void>,
): Promise<{ jobDeliveries: Delivery[]; results: Delivery[]; jobId: string }> {
  const jobDeliveries: Delivery[] = [];
  const results: Delivery[] = [];
  await bus.subscribe({ topic: topics.workerResults, name: unique("results") }, async (delivery) => {
    results.push(delivery);
  });
  const jobTopic = topics.workerJobs;
  const subscription = unique("jobs");
  await bus.subscribe(
    { topic: jobTopic, name: subscription, filter: { WorkerId: subscription } },
    async (delivery) => {
      jobDeliveries.push(delivery);
      await settle(delivery);
    },
  );
  const jobId = randomUUID();
  await bus.publish({ id: jobId, topic: jobTopic, properties: { WorkerId: subscription }, body: { jobId } });
  return { jobDeliveries, results, jobId };
}

describe("embedded bus: settleDelivery", () => {
  it("records the outcome, publishes the result and acknowledges the delivery together", async () => {
    const bus = await open();
    const store = createPostgresIdempotencyStore(database.db);
    const key = unique("worker-job");
    const resultId = randomUUID();
    const settled: boolean[] = [];
    const { jobDeliveries, results } = await jobAndResults(bus, async (delivery) => {
      settled.push(
        await bus.settleDelivery!({
          delivery,
          outcome: { key, value: { Status: "Success" }, ttlSeconds: 60 },
          messages: [{ id: resultId, topic: topics.workerResults, properties: {}, body: { ok: true } }],
        }),
      );
    });

    await waitUntil(() => expect(results.map((delivery) => delivery.id)).toEqual([resultId]));
    expect(settled).toEqual([true]);
    expect(await store.claim(key, claimOptions)).toEqual({
      status: "completed",
      value: { Status: "Success" },
    });
    // The delivered job's row is gone (deleted by the settle, not left for a redelivery).
    const { rows } = await sql<{ count: string }>`
      SELECT count(*) FROM pgboss.job WHERE data->>'topic' = ${topics.workerJobs}
        AND data->'body'->>'jobId' = ${(jobDeliveries[0]!.body as { jobId: string }).jobId}`.execute(
      database.db,
    );
    expect(Number(rows[0]!.count)).toBe(0);
    await pause(500);
    expect(jobDeliveries).toHaveLength(1);
  });

  it("does nothing at all when the statement fails, so the redelivery settles it once", async () => {
    const bus = await open();
    const store = createPostgresIdempotencyStore(database.db);
    const key = unique("worker-job");
    const resultId = randomUUID();
    const { jobDeliveries, results } = await jobAndResults(bus, async (delivery) => {
      // jsonb has no \u0000: the first attempt's outcome is refused by the server itself; its
      // result message (another id each attempt) is fine, and must not go out without the record.
      const value = delivery.deliveryCount === 1 ? { text: "a\u0000b" } : { text: "ok" };
      await bus.settleDelivery!({
        delivery,
        outcome: { key, value, ttlSeconds: 60 },
        messages: [
          {
            id: `${resultId}-${delivery.deliveryCount}`,
            topic: topics.workerResults,
            properties: {},
            body: { attempt: delivery.deliveryCount },
          },
        ],
      });
    });

    await waitUntil(() => expect(results).toHaveLength(1));
    expect(jobDeliveries.map((delivery) => delivery.deliveryCount)).toEqual([1, 2]);
    expect(results.map((delivery) => delivery.body)).toEqual([{ attempt: 2 }]);
    expect(await store.claim(key, claimOptions)).toEqual({ status: "completed", value: { text: "ok" } });
    await pause(500);
    expect(results).toHaveLength(1);
    expect(jobDeliveries).toHaveLength(2);
  });

  it("keeps a delivery settled when its handler throws afterwards: not delivered again", async () => {
    const bus = await open();
    const key = unique("worker-job");
    const { jobDeliveries, results } = await jobAndResults(bus, async (delivery) => {
      await bus.settleDelivery!({
        delivery,
        outcome: { key, value: null, ttlSeconds: 60 },
        messages: [{ id: randomUUID(), topic: topics.workerResults, properties: {}, body: {} }],
      });
      throw new Error("failed after settling");
    });

    await waitUntil(() => expect(results).toHaveLength(1));
    await pause(800);
    expect(jobDeliveries).toHaveLength(1);
  });

  it("refuses a second settle of one delivery, and settles nothing for a delivery it did not hand out", async () => {
    const bus = await open();
    const store = createPostgresIdempotencyStore(database.db);
    const [first, second, foreign] = [unique("first"), unique("second"), unique("foreign")];
    const errors: unknown[] = [];
    const message = () => ({ id: randomUUID(), topic: topics.workerResults, properties: {}, body: {} });
    const { results } = await jobAndResults(bus, async (delivery) => {
      await bus.settleDelivery!({
        delivery,
        outcome: { key: first, value: 1, ttlSeconds: 60 },
        messages: [message()],
      });
      await bus.settleDelivery!({
        delivery,
        outcome: { key: second, value: 2, ttlSeconds: 60 },
        messages: [message()],
      }).catch((error: unknown) => errors.push(error));
    });
    await waitUntil(() => expect(errors).toHaveLength(1));
    expect(String(errors[0])).toMatch(/acknowledged already/);

    const copy: Delivery = {
      id: randomUUID(),
      topic: topics.workerJobs,
      body: {},
      properties: {},
      deliveryCount: 1,
    };
    expect(
      await bus.settleDelivery!({
        delivery: copy,
        outcome: { key: foreign, value: 3, ttlSeconds: 60 },
        messages: [message()],
      }),
    ).toBe(false);
    await pause(500);
    expect(results).toHaveLength(1);
    expect((await store.claim(second, claimOptions)).status).toBe("claimed");
    expect((await store.claim(foreign, claimOptions)).status).toBe("claimed");
  });

  it("deletes only its own job: the same message waiting in another subscription's queue stays", async () => {
    const bus = await open();
    const waiting = unique("waiting");
    // Declared, not consumed: the message waits in that queue, under the same job id.
    await bus.declareSubscription({ topic: topics.workerJobs, name: waiting });
    const { results } = await jobAndResults(bus, async (delivery) => {
      await bus.settleDelivery!({
        delivery,
        outcome: { key: unique("worker-job"), value: null, ttlSeconds: 60 },
        messages: [{ id: randomUUID(), topic: topics.workerResults, properties: {}, body: {} }],
      });
    });
    await waitUntil(() => expect(results).toHaveLength(1));
    const { rows } = await sql<{ count: string }>`
      SELECT count(*) FROM pgboss.job WHERE name = ${subscriptionQueue(topics.workerJobs, waiting)}`.execute(
      database.db,
    );
    expect(Number(rows[0]!.count)).toBe(1);
  });
});

import { randomUUID } from "node:crypto";
import { enqueueOutbox } from "@matoolkit/db";
import { topics } from "@matoolkit/domain";
import { createTestDatabase } from "@matoolkit/testing";
import type { TestDatabase } from "@matoolkit/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createLogger } from "../logger.ts";
import type { Delivery } from "../ports/index.ts";
import { createEmbeddedRuntime } from "./create-embedded-runtime.ts";

describe("embedded runtime", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database.drop();
  });

  it("carries an outbox message to its subscriber, fires timers, and stops cleanly", async () => {
    const runtime = await createEmbeddedRuntime({
      connectionString: database.url,
      db: database.db,
      logger: createLogger({ level: "silent", name: "runtime-test" }),
    });
    try {
      const deliveries: Delivery[] = [];
      await runtime.bus.subscribe(
        { topic: topics.workerJobs, name: "worker-worker-01", filter: { WorkerId: "worker-01" } },
        async (delivery) => void deliveries.push(delivery),
      );
      let ticks = 0;
      await runtime.timers.scheduleRecurring(
        { name: "scheduler-tick", everySeconds: 60 },
        async () => void ticks++,
      );
      await runtime.startOutboxRelay();

      const messageId = `msg-${randomUUID()}`;
      const body = { JobId: "step-123-attempt-1", WorkerId: "worker-01" };
      await database.db
        .transaction()
        .execute((trx) =>
          enqueueOutbox(trx, [
            { messageId, topic: topics.workerJobs, properties: { WorkerId: "worker-01" }, body },
          ]),
        );

      await vi.waitFor(() => expect(deliveries).toHaveLength(1), { timeout: 15_000 });
      expect(deliveries[0]).toMatchObject({ id: messageId, body, properties: { WorkerId: "worker-01" } });
      await vi.waitFor(() => expect(ticks).toBe(1), { timeout: 15_000 });
      expect(
        await runtime.idempotency.claim(messageId, { ttlSeconds: 60, leaseSeconds: 30, owner: "test" }),
      ).toEqual({ status: "claimed" });
    } finally {
      await runtime.stop();
    }
  });
});

import { randomUUID } from "node:crypto";
import { topics } from "@matoolkit/domain";
import { createTestDatabase } from "@matoolkit/testing";
import type { TestDatabase } from "@matoolkit/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { openEmbeddedBus } from "../../test/embedded/open-embedded-bus.ts";

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.drop();
});

describe("embedded bus: delayed messages published in this process", () => {
  it("are delivered when due, not at the consumer's next poll", async () => {
    // A poll far beyond the test: only the due-time wake-up can deliver in time.
    const { bus, close } = await openEmbeddedBus(database, { pollingIntervalSeconds: 60 });
    try {
      const receivedAt: number[] = [];
      await bus.subscribe(
        { topic: topics.orchestratorEvents, name: `due-${randomUUID().slice(0, 8)}` },
        async () => {
          receivedAt.push(Date.now());
        },
      );
      // The subscription's first fetch (at start) has come back empty before the publish.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const dueAt = new Date(Date.now() + 1200);
      await bus.publish({
        id: randomUUID(),
        topic: topics.orchestratorEvents,
        properties: { MessageType: "retry-check" },
        body: {},
        deliverAt: dueAt,
      });
      await vi.waitFor(() => expect(receivedAt).toHaveLength(1), { timeout: 15_000, interval: 20 });
      expect(receivedAt[0]! - dueAt.getTime()).toBeGreaterThanOrEqual(-50);
      // Well before the 60 s poll, with room for a loaded machine (a 1 s bound is a timing bet).
      expect(receivedAt[0]! - dueAt.getTime()).toBeLessThan(10_000);
    } finally {
      await close();
    }
  });
});

import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { enqueueOutbox } from "./outbox.repository.ts";

let testDb: TestDatabase;
beforeAll(async () => {
  testDb = await createTestDatabase();
});
afterAll(async () => {
  await testDb?.drop();
});

it("writes more rows in one call than one statement's bind parameters allow (65,535)", async () => {
  const messages = Array.from({ length: 20_000 }, (_, i) => ({
    messageId: `bulk-${i}`,
    topic: "worker-jobs" as const,
    properties: { WorkerId: "worker-01" },
    body: { n: i },
  }));
  const ids = await testDb.db.transaction().execute((trx) => enqueueOutbox(trx, messages));
  expect(ids).toHaveLength(20_000);
  expect(new Set(ids).size).toBe(20_000);
  const count = await testDb.db
    .selectFrom("outbox")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  expect(count.n).toBe(20_000);
});

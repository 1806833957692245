import { randomUUID } from "node:crypto";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import pg from "pg";
import type PgBoss from "pg-boss";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../logger.ts";
import { createBoss } from "./create-boss.ts";
import { fetchRetryDelay, startQueueConsumer, type QueueJob } from "./queue-consumer.ts";

const logger = createLogger({ level: "silent", name: "queue-consumer-test" });
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe("fetchRetryDelay", () => {
  it("doubles from 100 ms and never waits longer than the poll interval", () => {
    expect([1, 2, 3, 4, 5].map((failures) => fetchRetryDelay(failures, 2_000))).toEqual([
      100, 200, 400, 800, 1_600,
    ]);
    expect(fetchRetryDelay(6, 2_000)).toBe(2_000);
    expect(fetchRetryDelay(10_000, 500)).toBe(500);
  });
});

describe("queue consumer: a fetch that fails", () => {
  let database: TestDatabase;
  let boss: PgBoss;
  let client: pg.Client;

  beforeAll(async () => {
    database = await createTestDatabase();
    boss = createBoss({ connectionString: database.url, maxConnections: 2, maintenance: false });
    boss.on("error", () => {});
    await boss.start();
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
  });
  afterAll(async () => {
    await client.end();
    await boss.stop({ graceful: false });
    await database.drop();
  });

  it("is tried again after a growing pause, not at once, and the consumer goes on once it works", async () => {
    // A fetch statement the database refuses at once (here a table that is not there; a schema
    // of another version, a revoked grant) failed, and was tried again at once, forever.
    let broken = true;
    let fetches = 0;
    const handled: string[] = [];
    const job: QueueJob = { id: randomUUID(), data: {}, retryCount: 0 };
    const consumer = startQueueConsumer({
      boss,
      queue: "queue-consumer-test",
      concurrency: 4,
      pollIntervalMs: 500,
      lockSeconds: 30,
      logger,
      handle: async (delivered) => {
        handled.push(delivered.id);
        return "done";
      },
      failureOutput: () => ({}),
      fetchInstead: async () => {
        fetches += 1;
        if (broken) await client.query("SELECT * FROM no_such_table");
        return handled.length === 0 ? [job] : [];
      },
    });
    try {
      await sleep(1_500);
      // 100 + 200 + 400 + 500 + 500 ms of pauses: 5 or 6 fetches in 1.5 s; without them, thousands.
      expect(fetches).toBeGreaterThanOrEqual(2);
      expect(fetches).toBeLessThan(30);

      broken = false;
      for (let waited = 0; handled.length === 0 && waited < 15_000; waited += 50) await sleep(50);
      expect(handled).toEqual([job.id]);
    } finally {
      await consumer.stop();
    }
  });
});

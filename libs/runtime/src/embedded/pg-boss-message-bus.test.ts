import { createTestDatabase } from "@matoolkit/testing";
import type { TestDatabase } from "@matoolkit/testing";
import { afterAll, beforeAll } from "vitest";
import { describeMessageBusContract } from "../contract/message-bus.contract.ts";
import { createLogger } from "../logger.ts";
import { createBoss } from "./create-boss.ts";
import { createPgBossMessageBus } from "./pg-boss-message-bus.ts";

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.drop();
});

const logger = createLogger({ level: "silent", name: "bus-test" });

// Each call is "another process": its own pg-boss, pool and LISTEN connection on the same database.
describeMessageBusContract("embedded (pg-boss)", async () => {
  const boss = createBoss({ connectionString: database.url, maxConnections: 3, maintenance: false });
  boss.on("error", () => {});
  await boss.start();
  const bus = await createPgBossMessageBus({
    boss,
    db: database.db,
    connectionString: database.url,
    logger,
    // Redeliver at once so ten attempts take milliseconds.
    retryDelaySeconds: 0,
    retryBackoff: false,
    pollingIntervalSeconds: 0.2,
  });
  return {
    bus,
    cleanup: async () => {
      await bus.stop();
      await boss.stop({ graceful: false });
    },
  };
});

import type { TestDatabase } from "@matoolkit/testing";
import type PgBoss from "pg-boss";
import { createLogger } from "../../src/logger.ts";
import { createBoss } from "../../src/embedded/create-boss.ts";
import type { BusTuning } from "../../src/embedded/bus-tuning.ts";
import { createPgBossMessageBus } from "../../src/embedded/pg-boss-message-bus.ts";
import type { MessageBus } from "../../src/ports/index.ts";

export interface OpenedBus {
  readonly bus: MessageBus;
  /** Its pg-boss (a test may compare what pg-boss itself writes). */
  readonly boss: PgBoss;
  /** Stops the bus, then its pg-boss. */
  close(): Promise<void>;
}

/**
 * An embedded bus as another process would have it on the test database: its own pg-boss (no
 * maintenance), pool and LISTEN connection. By default a failed delivery comes back at once and
 * consumers poll every 0.2 s, so tests of redelivery take milliseconds.
 */
export async function openEmbeddedBus(database: TestDatabase, tuning: BusTuning = {}): Promise<OpenedBus> {
  const boss = createBoss({ connectionString: database.url, maxConnections: 3, maintenance: false });
  boss.on("error", () => {});
  await boss.start();
  const bus = await createPgBossMessageBus({
    boss,
    db: database.db,
    connectionString: database.url,
    logger: createLogger({ level: "silent", name: "bus-test" }),
    retryDelaySeconds: 0,
    retryBackoff: false,
    pollingIntervalSeconds: 0.2,
    ...tuning,
  });
  return {
    bus,
    boss,
    async close() {
      await bus.stop();
      await boss.stop({ graceful: false });
    },
  };
}

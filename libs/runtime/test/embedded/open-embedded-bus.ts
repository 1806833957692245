import { randomUUID } from "node:crypto";
import type { TestDatabase } from "@matoolkit/testing";
import { afterEach, vi } from "vitest";
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

export interface EmbeddedBusesOfTest {
  /** Opens one more bus (another "process"), closed after the running test. */
  open(tuning?: BusTuning): Promise<MessageBus>;
  /** Those opened in the running test, in order. */
  readonly opened: readonly OpenedBus[];
}

/**
 * For a describe block whose tests open buses: each test's buses are closed after it. Call it in
 * the block's body (it registers an afterEach there); `database` is read when a bus is opened.
 */
export function embeddedBusesOfEachTest(database: () => TestDatabase): EmbeddedBusesOfTest {
  const opened: OpenedBus[] = [];
  afterEach(async () => {
    for (const { close } of opened.splice(0)) await close();
  });
  return {
    opened,
    async open(tuning) {
      const opening = await openEmbeddedBus(database(), tuning);
      opened.push(opening);
      return opening.bus;
    },
  };
}

/** A subscription name of its own for one test: tests share the database and its queues. */
export function uniqueSubscription(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

/** Polls `assertion` until it holds (10 s at most): deliveries arrive from other connections. */
export function waitUntil(assertion: () => void | Promise<void>): Promise<void> {
  return vi.waitFor(assertion, { timeout: 10_000, interval: 25 });
}

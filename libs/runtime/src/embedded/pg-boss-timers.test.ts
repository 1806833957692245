import { randomUUID } from "node:crypto";
import { createTestDatabase } from "@matoolkit/testing";
import type { TestDatabase } from "@matoolkit/testing";
import type PgBoss from "pg-boss";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createLogger } from "../logger.ts";
import type { Timers } from "../ports/index.ts";
import { createBoss } from "./create-boss.ts";
import { createPgBossTimers, nextDue } from "./pg-boss-timers.ts";

const logger = createLogger({ level: "silent", name: "timers-test" });
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe("nextDue", () => {
  it("keeps the cadence and skips the periods missed while nobody ran", () => {
    const dueAt = new Date("2025-03-15T10:00:00Z");
    expect(nextDue(dueAt, 60_000, dueAt.getTime() + 5_000).toISOString()).toBe("2025-03-15T10:01:00.000Z");
    expect(nextDue(dueAt, 60_000, dueAt.getTime() + 185_000).toISOString()).toBe("2025-03-15T10:04:00.000Z");
  });
});

describe("pg-boss timers", () => {
  let database: TestDatabase;
  const running: Array<{ boss: PgBoss; timers: Timers }> = [];

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterEach(async () => {
    for (const process of running.splice(0)) {
      await process.timers.stop();
      await process.boss.stop({ graceful: false });
    }
  });
  afterAll(async () => {
    await database.drop();
  });

  /** One "process": its own pg-boss on the shared database. */
  async function startProcess(): Promise<Timers> {
    const boss = createBoss({ connectionString: database.url, maxConnections: 2, maintenance: false });
    boss.on("error", () => {});
    await boss.start();
    const timers = createPgBossTimers({ boss, logger, pollingIntervalSeconds: 0.1 });
    running.push({ boss, timers });
    return timers;
  }

  function observedHandler(runMs: number) {
    const fired: number[] = [];
    let active = 0;
    let maxActive = 0;
    const handler = async () => {
      fired.push(Date.now());
      active += 1;
      maxActive = Math.max(maxActive, active);
      await sleep(runMs);
      active -= 1;
    };
    return { fired, handler, maxActive: () => maxActive };
  }

  it("fires at once on the first start, once across two processes, not a period later", async () => {
    // A period far beyond the test: a first run that waited for it would never come, however slow
    // the machine (a bound of one short period flaked under a loaded CI run).
    const timer = { name: `first-${randomUUID().slice(0, 8)}`, everySeconds: 600 };
    const observed = observedHandler(0);
    await (await startProcess()).scheduleRecurring(timer, observed.handler);
    await (await startProcess()).scheduleRecurring(timer, observed.handler);

    await vi.waitFor(() => expect(observed.fired.length).toBeGreaterThanOrEqual(1), { timeout: 10_000 });
    await sleep(1000);
    expect(observed.fired).toHaveLength(1);
  });

  it("fires once per period across two processes", async () => {
    const timer = { name: `tick-${randomUUID().slice(0, 8)}`, everySeconds: 1 };
    const observed = observedHandler(100);
    await (await startProcess()).scheduleRecurring(timer, observed.handler);
    await (await startProcess()).scheduleRecurring(timer, observed.handler);

    await vi.waitFor(() => expect(observed.fired.length).toBeGreaterThanOrEqual(1), { timeout: 10_000 });
    const firstAt = observed.fired[0]!;
    await sleep(3200 - (Date.now() - firstAt));
    // Ticks due at 0, 1, 2 and 3 s after the first: two uncoordinated processes would fire about eight times.
    expect(observed.fired.length).toBeGreaterThanOrEqual(3);
    expect(observed.fired.length).toBeLessThanOrEqual(5);
    const gaps = observed.fired.slice(1).map((at, index) => at - observed.fired[index]!);
    for (const gap of gaps) expect(gap).toBeGreaterThan(500);
    expect(observed.maxActive()).toBe(1);
  });

  it("never overlaps a run that outlasts the period", async () => {
    const timer = { name: `slow-${randomUUID().slice(0, 8)}`, everySeconds: 0.5 };
    const observed = observedHandler(900);
    await (await startProcess()).scheduleRecurring(timer, observed.handler);
    await (await startProcess()).scheduleRecurring(timer, observed.handler);

    await vi.waitFor(() => expect(observed.fired.length).toBeGreaterThanOrEqual(3), { timeout: 15_000 });
    expect(observed.maxActive()).toBe(1);
  });

  it("keeps firing after a handler throws", async () => {
    const timer = { name: `failing-${randomUUID().slice(0, 8)}`, everySeconds: 0.5 };
    let calls = 0;
    await (
      await startProcess()
    ).scheduleRecurring(timer, async () => {
      calls += 1;
      throw new Error("scheduler tick failed");
    });

    await vi.waitFor(() => expect(calls).toBeGreaterThanOrEqual(3), { timeout: 15_000 });
  });

  it("fires nothing after stop()", async () => {
    const timer = { name: `stopped-${randomUUID().slice(0, 8)}`, everySeconds: 0.5 };
    const observed = observedHandler(0);
    const timers = await startProcess();
    await timers.scheduleRecurring(timer, observed.handler);
    await vi.waitFor(() => expect(observed.fired.length).toBeGreaterThanOrEqual(1), { timeout: 15_000 });

    await timers.stop();
    const firedBeforeStop = observed.fired.length;
    await sleep(1200);
    expect(observed.fired.length).toBe(firedBeforeStop);
  });
});

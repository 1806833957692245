import { createStandInBroker, startStandInSidecar, type StandInBroker } from "@matoolkit/dapr-stand-in";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createLogger } from "../logger.ts";
import { createDaprHttp } from "./dapr-http.ts";
import { createDaprStateStore } from "./dapr-state-store.ts";
import { createGuardedTick } from "./guarded-tick.ts";

/**
 * The guarded tick after a scheduler crash on a DynamoDB-like state store (issue 14, finding 2):
 * the dead run's lease expires but is not swept, and must not block the timer.
 */
const logger = createLogger({ level: "silent", name: "guarded-tick-test" });
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function openProcess(broker: StandInBroker, now: () => number) {
  const sidecar = await startStandInSidecar({ broker, appId: "matoolkit-scheduler", log: () => undefined });
  cleanups.push(() => sidecar.stop());
  await sidecar.ready();
  const state = createDaprStateStore(createDaprHttp({ httpEndpoint: sidecar.url }), "matoolkit-state", {
    now,
  });
  return { sidecar, state };
}

describe("guarded tick on a DynamoDB-like state store", () => {
  it("runs the next period's handler once the lease of a crashed run expired", async () => {
    let clock = Date.parse("2026-01-01T00:00:00Z");
    const now = () => clock;
    const broker = createStandInBroker({ stateStoreKind: "dynamodb", stateClock: () => new Date(clock) });
    cleanups.push(() => broker.close());
    const everySeconds = 10;
    const leaseSeconds = 60; // guarded-tick.ts: max(60, 4 periods)

    // A scheduler starts a tick whose handler never finishes, then its process is gone.
    const crashedProcess = await openProcess(broker, now);
    let crashedStarted = false;
    const crashed = createGuardedTick({
      state: crashedProcess.state,
      logger,
      name: "poll",
      everySeconds,
      handler: () =>
        new Promise<void>(() => {
          crashedStarted = true;
        }),
    });
    void crashed.run(new Date(clock));
    await vi.waitFor(() => expect(crashedStarted).toBe(true));
    await crashedProcess.sidecar.stop();

    const runs: Date[] = [];
    const survivor = await openProcess(broker, now);
    const tick = createGuardedTick({
      state: survivor.state,
      logger,
      name: "poll",
      everySeconds,
      handler: async (firedAt) => void runs.push(firedAt),
    });

    // While the dead run's lease is live, later periods are skipped.
    clock += (leaseSeconds / 2) * 1000;
    await tick.run(new Date(clock));
    expect(runs).toEqual([]);

    // Past the lease (the item is still stored, hidden from reads): the next period runs.
    clock += (leaseSeconds / 2 + 1) * 1000;
    const firedAt = new Date(clock);
    await tick.run(firedAt);
    expect(runs).toEqual([firedAt]);
  });
});

import type { Logger } from "../logger.ts";
import type { TimerHandler } from "../ports/index.ts";
import type { DaprStateStore } from "./dapr-state-store.ts";

/**
 * Runs a recurring timer's handler at most once per period across every replica, and never
 * twice at the same time, using two first-write keys in the Dapr state store:
 * - `timer|<name>|slot|<n>`: the period's slot; whoever creates it runs this period (a Jobs API
 *   trigger that fires late or twice, or every replica's own interval, all collapse into one run);
 * - `timer|<name>|lease`: held while the handler runs, so a slow tick is not overlapped by the
 *   next period's on another replica. If the holder dies mid-run, the lease expires (logically,
 *   dapr-state-store.ts) and the next period's run takes it over, whatever the store's own TTL
 *   sweep does (DynamoDB keeps an expired item, refusing first writes, until it sweeps it).
 * The embedded adapter gets the same guarantees from pg-boss singleton jobs.
 */
export function createGuardedTick(args: {
  readonly state: DaprStateStore;
  readonly logger: Logger;
  readonly name: string;
  readonly everySeconds: number;
  readonly handler: TimerHandler;
}): { run(firedAt: Date): Promise<void>; idle(): Promise<void> } {
  const { state, logger, name, everySeconds, handler } = args;
  const leaseSeconds = Math.max(60, everySeconds * 4);
  let running: Promise<void> | undefined;

  const runOnce = async (firedAt: Date): Promise<void> => {
    const slot = Math.floor(firedAt.getTime() / (everySeconds * 1000));
    if (!(await state.create(`timer|${name}|slot|${slot}`, { firedAt }, everySeconds * 3))) return;
    const leaseKey = `timer|${name}|lease`;
    if (!(await state.create(leaseKey, { since: new Date().toISOString() }, leaseSeconds))) {
      logger.warn({ timer: name }, "previous run still holds the lease; this period is skipped");
      return;
    }
    try {
      await handler(firedAt);
    } catch (error) {
      // The next period runs anyway; a failing tick must not stop the schedule.
      logger.error({ err: error, timer: name }, "timer handler failed");
    } finally {
      await state
        .delete(leaseKey)
        .catch((error: unknown) =>
          logger.warn(
            { err: error, timer: name },
            "could not release the timer lease; it expires on its own",
          ),
        );
    }
  };

  return {
    async run(firedAt) {
      if (running !== undefined) return; // this process is still on the previous period
      running = runOnce(firedAt).finally(() => (running = undefined));
      await running;
    },
    idle: async () => void (await running),
  };
}

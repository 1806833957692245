import type { PacingClock } from "./pacing-clock.ts";

/**
 * A PacingClock that moves only when a test says so: `advance(ms)` fires the sleeps that fall
 * due in time order, letting the code they wake run before the next one. Tests of the pacing
 * then count starts per window of this clock, never wall-clock speed.
 */
export interface ManualClock extends PacingClock {
  advance(ms: number): Promise<void>;
  /** Sleeps not yet due. */
  readonly sleepers: number;
}

interface Sleeper {
  readonly at: number;
  readonly resolve: () => void;
}

/** Lets every promise continuation queued so far (and those they queue) run. */
export const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export function createManualClock(start = 0): ManualClock {
  let now = start;
  const sleepers: Sleeper[] = [];
  return {
    now: () => now,
    sleep(ms, signal) {
      if (signal.aborted) return Promise.reject(signal.reason);
      return new Promise<void>((resolve, reject) => {
        const sleeper: Sleeper = {
          at: now + Math.max(0, ms),
          resolve: () => {
            signal.removeEventListener("abort", onAbort);
            resolve();
          },
        };
        const onAbort = (): void => {
          sleepers.splice(sleepers.indexOf(sleeper), 1);
          reject(signal.reason);
        };
        signal.addEventListener("abort", onAbort, { once: true });
        sleepers.push(sleeper);
      });
    },
    async advance(ms) {
      const until = now + ms;
      await settle();
      for (;;) {
        const due = sleepers.filter((s) => s.at <= until).sort((a, b) => a.at - b.at)[0];
        if (due === undefined) break;
        sleepers.splice(sleepers.indexOf(due), 1);
        now = Math.max(now, due.at);
        due.resolve();
        await settle();
      }
      now = until;
      await settle();
    },
    get sleepers() {
      return sleepers.length;
    },
  };
}

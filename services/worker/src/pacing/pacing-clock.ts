import { performance } from "node:perf_hooks";
import { abortableDelay } from "../abortable-delay.ts";

/**
 * Time as the pacing modules see it, injected so their tests drive a manual clock instead of
 * waiting on the wall clock (manual-clock.test-support.ts). Milliseconds on a monotonic scale:
 * only differences mean anything, and a wall-clock change must not release a burst of starts.
 */
export interface PacingClock {
  now(): number;
  /** Resolves after `ms`; rejects with the signal's reason as soon as it aborts. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

export const systemPacingClock: PacingClock = {
  now: () => performance.now(),
  sleep: (ms, signal) => abortableDelay(ms, signal),
};

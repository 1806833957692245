import type { PacingClock } from "./pacing-clock.ts";

/**
 * Spaces job starts: one start per 1/rate seconds at most, first come first served. No burst
 * allowance: two starts are never closer than 1/rate (the rate read at the later one), so any
 * window of one second holds at most `rate` starts, and a phase of 10,000 members ramps at
 * the rate instead of starting as fast as the bus delivers. The rate is read at every decision,
 * so a lower value (a throttling storm) applies to the very next start.
 */
export interface StartPacer {
  /**
   * Resolves when the caller may start; rejects with the signal's reason if it aborts first
   * (the caller then has started nothing and gives its delivery back).
   */
  acquire(signal: AbortSignal): Promise<void>;
  /** Callers waiting for their turn. */
  readonly waiting: number;
  /** Starts granted so far. */
  readonly started: number;
  /** Stops the pacer's timer; callers still waiting are refused (after the worker stopped, none is). */
  close(): void;
}

export interface StartPacerOptions {
  /** Starts per second allowed at `now` (> 0). */
  readonly rate: (now: number) => number;
  readonly clock: PacingClock;
  /** Called at each start, with the clock's time. */
  readonly onStart?: (at: number) => void;
}

interface Waiter {
  readonly resolve: () => void;
  readonly reject: (reason: unknown) => void;
  readonly signal: AbortSignal;
  readonly onAbort: () => void;
}

export function createStartPacer(options: StartPacerOptions): StartPacer {
  const { clock } = options;
  const queue: Waiter[] = [];
  let lastStartAt = Number.NEGATIVE_INFINITY;
  let started = 0;
  let pumping = false;
  let closed = false;
  /** Aborts the pump's sleep: nobody waits any more, or the pacer closed. */
  let sleeping: AbortController | undefined;

  const grant = (waiter: Waiter, now: number): void => {
    waiter.signal.removeEventListener("abort", waiter.onAbort);
    lastStartAt = now;
    started++;
    options.onStart?.(now);
    waiter.resolve();
  };

  // One loop serves the queue in order; it sleeps until the head's turn, then reads the rate
  // again (it may have dropped meanwhile) rather than trusting the time it computed before.
  const pump = async (): Promise<void> => {
    if (pumping) return;
    pumping = true;
    try {
      while (!closed && queue.length > 0) {
        const now = clock.now();
        const turn = lastStartAt + 1000 / options.rate(now);
        if (now >= turn) {
          grant(queue.shift()!, now);
          continue;
        }
        sleeping = new AbortController();
        try {
          await clock.sleep(turn - now, sleeping.signal);
        } catch {
          // Woken early: the queue emptied or the pacer closed; the loop condition decides.
        }
        sleeping = undefined;
      }
    } finally {
      pumping = false;
    }
  };

  return {
    acquire(signal) {
      if (signal.aborted) return Promise.reject(signal.reason);
      if (closed) return Promise.reject(new Error("the start pacer is closed"));
      return new Promise<void>((resolve, reject) => {
        const waiter: Waiter = {
          resolve,
          reject,
          signal,
          onAbort: () => {
            const index = queue.indexOf(waiter);
            if (index >= 0) queue.splice(index, 1);
            if (queue.length === 0) sleeping?.abort();
            reject(signal.reason);
          },
        };
        signal.addEventListener("abort", waiter.onAbort, { once: true });
        queue.push(waiter);
        void pump();
      });
    },
    get waiting() {
      return queue.length;
    },
    get started() {
      return started;
    },
    close() {
      closed = true;
      sleeping?.abort();
      for (const waiter of queue.splice(0)) {
        waiter.signal.removeEventListener("abort", waiter.onAbort);
        waiter.reject(new Error("the start pacer is closed"));
      }
    },
  };
}

/**
 * At most `limit()` calls at once to one API (Graph or Exchange), the rest waiting in arrival
 * order. The limit is read at each admission, so when throttling lowers it the calls already
 * out finish and no new one goes until the count is under the new limit; when it climbs back,
 * the next release admits more. Unlike the worker's job slots (concurrency-limiter.ts), this
 * counts HTTP calls: one job may make many, and several jobs share the tenant's budget.
 */
export interface InFlightGate {
  /** Resolves with the release once admitted; rejects with the signal's reason if it aborts first. */
  acquire(signal: AbortSignal): Promise<() => void>;
  readonly inFlight: number;
  readonly waiting: number;
}

interface Waiter {
  readonly admit: () => void;
  readonly signal: AbortSignal;
  readonly onAbort: () => void;
}

/** `limit()` is floored to a whole number of calls, at least 1. */
export function createInFlightGate(limit: () => number): InFlightGate {
  let inFlight = 0;
  const queue: Waiter[] = [];

  const allowed = (): number => Math.max(1, Math.floor(limit()));

  const release = (): void => {
    inFlight--;
    while (queue.length > 0 && inFlight < allowed()) {
      const waiter = queue.shift()!;
      waiter.signal.removeEventListener("abort", waiter.onAbort);
      waiter.admit();
    }
  };

  /** Each admission gets its own release, which counts once however often it is called. */
  const admitted = (): (() => void) => {
    inFlight++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      release();
    };
  };

  return {
    acquire(signal) {
      if (signal.aborted) return Promise.reject(signal.reason);
      // Behind earlier waiters even when under the limit: arrival order, no overtaking.
      if (queue.length === 0 && inFlight < allowed()) return Promise.resolve(admitted());
      return new Promise((resolve, reject) => {
        const waiter: Waiter = {
          admit: () => resolve(admitted()),
          signal,
          onAbort: () => {
            const index = queue.indexOf(waiter);
            if (index >= 0) queue.splice(index, 1);
            reject(signal.reason);
          },
        };
        signal.addEventListener("abort", waiter.onAbort, { once: true });
        queue.push(waiter);
      });
    },
    get inFlight() {
      return inFlight;
    },
    get waiting() {
      return queue.length;
    },
  };
}

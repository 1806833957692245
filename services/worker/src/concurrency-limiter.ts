/**
 * At most `limit` tasks run at once; the rest wait in arrival order. The bus adapter is asked for
 * a bound too, but the worker enforces its own: running more functions than configured would
 * multiply the load (and the throttling) on the target tenant.
 */
export interface ConcurrencyLimiter {
  run<T>(task: () => Promise<T>): Promise<T>;
  /**
   * Waits for a slot and holds it until `release()` (which may be called more than once: the
   * first call frees the slot), for a task whose slot ends before its caller is done.
   */
  acquire(): Promise<LimiterSlot>;
  /** Resolves once nothing is running or waiting. */
  idle(): Promise<void>;
}

export interface LimiterSlot {
  release(): void;
}

export function createConcurrencyLimiter(limit: number): ConcurrencyLimiter {
  if (!Number.isInteger(limit) || limit < 1)
    throw new RangeError(`concurrency must be an integer ≥ 1, got ${limit}`);
  let running = 0;
  const waiting: Array<() => void> = [];
  let idleWaiters: Array<() => void> = [];

  const release = (): void => {
    const next = waiting.shift();
    if (next !== undefined) {
      next();
      return;
    }
    running--;
    if (running === 0) {
      for (const resolve of idleWaiters) resolve();
      idleWaiters = [];
    }
  };

  const acquire = async (): Promise<LimiterSlot> => {
    // A released slot goes straight to the next waiter, so `running` never dips.
    if (running < limit) running++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    let held = true;
    return {
      release() {
        if (!held) return;
        held = false;
        release();
      },
    };
  };

  return {
    async run(task) {
      const slot = await acquire();
      try {
        return await task();
      } finally {
        slot.release();
      }
    },
    acquire,
    idle() {
      return running === 0 ? Promise.resolve() : new Promise((resolve) => idleWaiters.push(resolve));
    },
  };
}

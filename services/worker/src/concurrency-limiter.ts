/**
 * At most `limit` tasks run at once; the rest wait in arrival order. The bus adapter is asked for
 * the same bound, but the worker enforces it itself: running more functions than configured
 * would multiply the load (and the throttling) on the target tenant.
 */
export interface ConcurrencyLimiter {
  run<T>(task: () => Promise<T>): Promise<T>;
  /** Resolves once nothing is running or waiting. */
  idle(): Promise<void>;
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

  return {
    async run(task) {
      // A finishing task hands its slot straight to the next waiter, so `running` never dips.
      if (running < limit) running++;
      else await new Promise<void>((resolve) => waiting.push(resolve));
      try {
        return await task();
      } finally {
        release();
      }
    },
    idle() {
      return running === 0 ? Promise.resolve() : new Promise((resolve) => idleWaiters.push(resolve));
    },
  };
}

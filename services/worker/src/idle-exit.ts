/**
 * 000 "Scale-to-Zero": "when idle (no messages and no active jobs for 300 seconds): worker exits
 * gracefully", so KEDA/ACA can scale the pool back to zero replicas. The worker is idle once it
 * has had no delivery and no running job for `idleMs`: the clock starts when the monitor is
 * created and restarts at every delivery and every job end, and never runs while a job runs, so
 * a job longer than the timeout never triggers the exit. `onIdle` is called once.
 */
export interface IdleMonitor {
  /** Wraps the handling of one delivery (waiting for a slot included): the worker is busy meanwhile. */
  track<T>(handle: () => Promise<T>): Promise<T>;
  /** Deliveries being handled now. */
  busy(): number;
  /** Cancels the pending timer; onIdle will not be called afterwards. */
  stop(): void;
}

export interface IdleMonitorOptions {
  readonly idleMs: number;
  readonly onIdle: () => void;
}

export function createIdleMonitor(options: IdleMonitorOptions): IdleMonitor {
  if (!Number.isFinite(options.idleMs) || options.idleMs <= 0) {
    throw new RangeError(`idleMs must be a positive number, got ${options.idleMs}`);
  }
  let running = 0;
  let timer: NodeJS.Timeout | undefined;
  let done = false;

  const arm = (): void => {
    clearTimeout(timer);
    timer = undefined;
    if (done || running > 0) return;
    timer = setTimeout(() => {
      timer = undefined;
      if (done || running > 0) return;
      done = true;
      options.onIdle();
    }, options.idleMs);
    // The bus keeps the process alive while it should be; an idle timer alone must not.
    timer.unref?.();
  };

  arm();
  return {
    async track(handle) {
      running++;
      clearTimeout(timer);
      timer = undefined;
      try {
        return await handle();
      } finally {
        running--;
        arm();
      }
    },
    busy: () => running,
    stop() {
      done = true;
      clearTimeout(timer);
      timer = undefined;
    },
  };
}

import { useEffect, useRef } from "preact/hooks";

/** How often a live batch is read again. */
export const POLL_INTERVAL_MS = 2_000;

/**
 * Runs `tick` now and then again `intervalMs` after each run settles, while `active`. Chained
 * timeouts rather than setInterval: a slow answer never overlaps the next request, and a tab in
 * the background (throttled timers) does not queue a burst of requests for when it comes back.
 * `tick` is read through a ref so a new closure every render does not restart the loop.
 */
export function usePolling(tick: () => Promise<void>, active: boolean, intervalMs = POLL_INTERVAL_MS): void {
  const latest = useRef(tick);
  latest.current = tick;
  useEffect(() => {
    if (!active) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = async () => {
      try {
        await latest.current();
      } catch {
        // The tick shows its own errors; polling goes on so a passing outage heals by itself.
      }
      if (!stopped) timer = setTimeout(() => void run(), intervalMs);
    };
    void run();
    return () => {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
    };
  }, [active, intervalMs]);
}

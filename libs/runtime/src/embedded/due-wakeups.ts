/**
 * Wakes this process's consumers of a queue (or the one of them that takes the message, see
 * `schedule`) when a delayed message published here falls due,
 * rather than at their next safety-net poll (issue 29: "retry lateness p99 ≤ 1 s"; the poll is
 * half a second and a fetch behind a busy queue adds to it). A NOTIFY cannot do it: PostgreSQL
 * sends it at the publish's commit, not at the due time. Consumers in other processes still find
 * the message by polling; a wake-up for a rolled-back publish only costs an empty fetch.
 *
 * Wake-ups falling within the same few milliseconds for one queue share a timer, and only those
 * due within `horizonMs` get one (a timer per far-off message would be memory for nothing: the
 * poll finds them on time to the half second).
 */
export interface DueWakeups {
  /** `targets`: whom to wake, as the bus names them (a queue's consumers, or one of them). */
  schedule(targets: readonly string[], dueAt: Date): void;
  /** Clears every pending timer. */
  stop(): void;
}

const coalesceMs = 10;

export function createDueWakeups(wake: (target: string) => void, horizonMs = 15 * 60_000): DueWakeups {
  const timers = new Map<string, NodeJS.Timeout>();
  return {
    schedule(targets, dueAt) {
      const delay = dueAt.getTime() - Date.now();
      if (delay <= 0 || delay > horizonMs) return;
      const slot = Math.ceil(dueAt.getTime() / coalesceMs) * coalesceMs;
      for (const target of targets) {
        const key = `${target}@${slot}`;
        if (timers.has(key)) continue;
        const timer = setTimeout(() => {
          timers.delete(key);
          wake(target);
        }, slot - Date.now());
        timer.unref();
        timers.set(key, timer);
      }
    },
    stop() {
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
    },
  };
}

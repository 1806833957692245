/**
 * Timer port: recurring work (the scheduler tick, sweeps). In Dapr mode a Dapr job; embedded, a
 * cron-like schedule on PostgreSQL so that with several processes one tick runs once, and a tick
 * still running is not overlapped by the next.
 */
export interface RecurringTimer {
  /** Unique name; one schedule per name across all processes. */
  readonly name: string;
  readonly everySeconds: number;
}

export type TimerHandler = (firedAt: Date) => Promise<void>;

export interface Timers {
  scheduleRecurring(timer: RecurringTimer, handler: TimerHandler): Promise<void>;
  stop(): Promise<void>;
}

import type PgBoss from "pg-boss";
import { z } from "zod";
import type { Logger } from "../logger.ts";
import type { RecurringTimer, TimerHandler, Timers } from "../ports/index.ts";
import { bossSchema } from "./bus-tables.ts";
import { startQueueConsumer } from "./queue-consumer.ts";
import type { QueueConsumer } from "./queue-consumer.ts";
import { timerQueue } from "./queue-names.ts";

export interface PgBossTimersOptions {
  /** A started pg-boss (shared with the bus). */
  readonly boss: PgBoss;
  readonly logger: Logger;
  /** How often an idle process looks for a due tick; bounds how late a tick fires. */
  readonly pollingIntervalSeconds?: number;
  /**
   * Lock on a running tick, renewed while it runs. After a crash mid-tick the timer resumes
   * once the lock expired, pg-boss maintenance failed the tick and a 30 s chain check ran.
   */
  readonly lockSeconds?: number;
}

const timerSchema = z.object({
  name: z.string().regex(/^[A-Za-z0-9_-]{1,100}$/u),
  everySeconds: z.number().min(0.5),
});
const tickSchema = z.object({ dueAt: z.iso.datetime() });

/** How often each process checks that its timers still have a tick queued (chain repair). */
const ensureEveryMs = 30_000;

/**
 * Recurring timers as a self-rescheduling chain of pg-boss jobs, one queue per timer:
 * - a tick runs the handler, THEN enqueues the next tick (first slot of the cadence after now),
 *   while still locked: so at any moment there is one tick, waiting or running, never two, and a
 *   run longer than the period delays the next tick instead of overlapping it;
 * - competing processes fetch with SKIP LOCKED: whichever takes the tick runs it, the others
 *   find nothing; the `stately` policy (one job per state) backs this up if two ever race;
 * - every process "ensures" the chain at start and every 30 s: it enqueues a tick due now only
 *   when the queue has none waiting, running or retrying. This seeds the first tick and repairs
 *   the chain when it broke (a crash mid-run: once its lock expires pg-boss fails it; a failed
 *   enqueue of the next tick);
 * - precision is the consumer poll (0.5 s by default), so sub-minute periods work.
 * pg-boss `schedule()` (cron) was not used: minute granularity, a monitor that runs every 30 s
 * at best, and nothing that stops a slow run from overlapping the next one.
 * Known edges: an interrupted run is not resumed, the repaired chain fires at once; a process
 * that loses its database connection mid-run cannot renew its lock, so after the lock expires
 * another process may start the next tick while the cut-off run is still going.
 */
export function createPgBossTimers(options: PgBossTimersOptions): Timers {
  const { boss, logger } = options;
  const pollIntervalMs = (options.pollingIntervalSeconds ?? 0.5) * 1000;
  const lockSeconds = options.lockSeconds ?? 60;
  const consumers: QueueConsumer[] = [];
  const ensureTimers: NodeJS.Timeout[] = [];
  let stopped = false;

  const enqueueTick = (queue: string, name: string, dueAt: Date): Promise<string | null> =>
    // Null when a tick is already waiting: the `stately` unique index keeps one.
    boss.send(queue, { dueAt: dueAt.toISOString() }, { singletonKey: name, startAfter: dueAt });

  const ensureTick = async (queue: string, name: string): Promise<void> => {
    const pending = await boss
      .getDb()
      .executeSql(`SELECT 1 FROM ${bossSchema}.job WHERE name = $1 AND state < 'completed' LIMIT 1`, [queue]);
    if (pending.rows.length === 0) await enqueueTick(queue, name, new Date());
  };

  return {
    async scheduleRecurring(timer: RecurringTimer, handler: TimerHandler) {
      if (stopped) throw new Error("Timers are stopped");
      const { name, everySeconds } = timerSchema.parse(timer);
      const queue = timerQueue(name);
      const periodMs = everySeconds * 1000;
      // No retries: an interrupted tick is replaced by a fresh one (ensureTick), not replayed.
      const queueOptions: PgBoss.Queue = {
        name: queue,
        policy: "stately",
        retryLimit: 0,
        expireInSeconds: lockSeconds,
      };
      await boss.createQueue(queue, queueOptions);
      await boss.updateQueue(queue, queueOptions);
      await ensureTick(queue, name);
      const ensure = setInterval(() => {
        ensureTick(queue, name).catch((error: unknown) =>
          logger.warn({ err: error, timer: name }, "timer check failed"),
        );
      }, ensureEveryMs);
      ensure.unref();
      ensureTimers.push(ensure);

      consumers.push(
        startQueueConsumer({
          boss,
          queue,
          concurrency: 1,
          pollIntervalMs,
          lockSeconds,
          logger,
          handle: async (job) => {
            const { dueAt } = tickSchema.parse(job.data);
            try {
              await handler(new Date());
            } catch (error) {
              // A failed tick is not retried: the next period runs the work again anyway.
              logger.error({ err: error, timer: name }, "timer handler failed");
            }
            try {
              await enqueueTick(queue, name, nextDue(new Date(dueAt), periodMs, Date.now()));
            } catch (error) {
              // Failing the tick would not help (no retries); the next ensureTick repairs the chain.
              logger.error({ err: error, timer: name }, "could not enqueue the next tick");
            }
            return "done";
          },
          failureOutput: (error) => ({ message: error instanceof Error ? error.name : "tick failed" }),
        }),
      );
    },

    async stop() {
      stopped = true;
      ensureTimers.splice(0).forEach((timer) => clearInterval(timer));
      await Promise.all(consumers.map((consumer) => consumer.stop()));
      consumers.length = 0;
    },
  };
}

/** The first slot of the cadence after `now`: missed periods (downtime) are skipped, not replayed. */
export function nextDue(dueAt: Date, periodMs: number, now: number): Date {
  const missed = Math.max(0, Math.floor((now - dueAt.getTime()) / periodMs));
  return new Date(dueAt.getTime() + (missed + 1) * periodMs);
}

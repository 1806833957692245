import type PgBoss from "pg-boss";
import type { Logger } from "../logger.ts";
import { bossSchema } from "./bus-tables.ts";

export type BossJob = PgBoss.JobWithMetadata<unknown>;

export interface QueueConsumerOptions {
  readonly boss: PgBoss;
  readonly queue: string;
  /** Jobs handled at once by this consumer. */
  readonly concurrency: number;
  /** Safety-net poll; `wake()` (a NOTIFY, a finished handler) fetches sooner. */
  readonly pollIntervalMs: number;
  /** The queue's lock (pg-boss `expireInSeconds`); renewed while a handler runs. */
  readonly lockSeconds: number;
  readonly logger: Logger;
  /** Resolves: the job is completed. Throws: the job fails with `failureOutput(error)`. */
  readonly handle: (job: BossJob) => Promise<void>;
  readonly failureOutput: (error: unknown, job: BossJob) => object;
  /** A failure retrying cannot fix (a malformed message): dead-letter it now, not after 10 tries. */
  readonly isPoison?: (error: unknown) => boolean;
}

export interface QueueConsumer {
  /** Fetch now rather than at the next poll. */
  wake(): void;
  /** Fetches nothing more and resolves once the handlers already running have finished. */
  stop(): Promise<void>;
}

/**
 * Our own fetch loop over pg-boss primitives (fetch / complete / fail) rather than `work()`:
 * - work() completes or fails a job after the handler WITHOUT awaiting it, so a failed job with
 *   no retry delay can be refetched while the old completion is still in flight; we await both;
 * - a failure is stored as our sanitized output, never the raw error with its stack;
 * - we renew the lock (started_on) while a handler runs, Service Bus style, so a short lock
 *   recovers a crashed consumer quickly without expiring a long, healthy handler;
 * - `concurrency` is the number of free slots fetched at once, and a NOTIFY can wake the loop.
 * Fetching uses pg-boss's `FOR UPDATE SKIP LOCKED`, so consumers in many processes compete.
 */
export function startQueueConsumer(options: QueueConsumerOptions): QueueConsumer {
  const { boss, queue, logger } = options;
  const inFlight = new Set<Promise<void>>();
  const renewLockSql = `UPDATE ${bossSchema}.job SET started_on = now() WHERE name = $1 AND id = $2 AND state = 'active'`;
  // pg-boss dead-letters a failing job once retry_count reaches retry_limit: spend them all now.
  const exhaustRetriesSql = `UPDATE ${bossSchema}.job SET retry_count = retry_limit WHERE name = $1 AND id = $2 AND state = 'active'`;
  let stopping = false;
  let woken = false;
  let interruptSleep: (() => void) | undefined;

  const wake = (): void => {
    woken = true;
    interruptSleep?.();
  };

  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      if (woken || stopping) return resolve();
      const done = (): void => {
        clearTimeout(timer);
        interruptSleep = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      interruptSleep = done;
    });

  const run = async (job: BossJob): Promise<void> => {
    const renew = setInterval(
      () => {
        boss
          .getDb()
          .executeSql(renewLockSql, [queue, job.id])
          .catch((error: unknown) => logger.warn({ err: error, queue }, "lock renewal failed"));
      },
      (options.lockSeconds * 1000) / 3,
    );
    let failure: { error: unknown } | undefined;
    try {
      await options.handle(job);
    } catch (error) {
      failure = { error };
    } finally {
      clearInterval(renew);
    }
    try {
      if (failure === undefined) await boss.complete(queue, job.id);
      else {
        if (options.isPoison?.(failure.error) === true) {
          await boss.getDb().executeSql(exhaustRetriesSql, [queue, job.id]);
        }
        await boss.fail(queue, job.id, options.failureOutput(failure.error, job));
      }
    } catch (error) {
      // The job stays locked until its lock expires, then it is delivered again (at-least-once).
      logger.error({ err: error, queue }, "could not record the outcome of a delivery");
    }
  };

  const loop = async (): Promise<void> => {
    while (!stopping) {
      woken = false;
      const free = options.concurrency - inFlight.size;
      let fetched = 0;
      if (free > 0) {
        try {
          const jobs = await boss.fetch<unknown>(queue, { batchSize: free, includeMetadata: true });
          fetched = jobs.length;
          for (const job of jobs) {
            const running: Promise<void> = run(job).finally(() => {
              inFlight.delete(running);
              wake();
            });
            inFlight.add(running);
          }
        } catch (error) {
          logger.warn({ err: error, queue }, "fetch failed");
        }
      }
      // A full batch suggests more are waiting: fetch again at once.
      if (fetched === 0 || fetched < free) await sleep(options.pollIntervalMs);
    }
  };

  const looping = loop();

  return {
    wake,
    async stop() {
      stopping = true;
      interruptSleep?.();
      await looping;
      await Promise.all([...inFlight]);
    },
  };
}

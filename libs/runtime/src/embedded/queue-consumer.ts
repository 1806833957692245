import type PgBoss from "pg-boss";
import type { Logger } from "../logger.ts";
import { bossSchema } from "./bus-tables.ts";
import { createGroupCommit } from "./group-commit.ts";

export type BossJob = PgBoss.JobWithMetadata<unknown>;
/** What a consumer uses of a job: pg-boss's fetch returns more (BossJob), a transactional take this. */
export type QueueJob = Pick<BossJob, "id" | "data" | "retryCount">;

export interface QueueConsumerOptions {
  readonly boss: PgBoss;
  readonly queue: string;
  /** Jobs handled at once by this consumer. */
  readonly concurrency: number;
  /** Safety-net poll; `wake()` (a NOTIFY) and freed slots fetch sooner (see `shouldFetch`). */
  readonly pollIntervalMs: number;
  /** The queue's lock (pg-boss `expireInSeconds`); renewed while a handler runs. */
  readonly lockSeconds: number;
  readonly logger: Logger;
  /**
   * Resolves "done": the consumer deletes the job; "acknowledged": the handler deleted it already
   * (MessageBus.settleDelivery). Throws: the job fails with `failureOutput(error)`.
   */
  readonly handle: (job: QueueJob) => Promise<"done" | "acknowledged">;
  readonly failureOutput: (error: unknown, job: QueueJob) => object;
  /** A failure retrying cannot fix (a malformed message): dead-letter it now, not after 10 tries. */
  readonly isPoison?: (error: unknown) => boolean;
  /**
   * false: never fetch; run only the jobs handed to `runJobs` (a transactional consumer's
   * fallback, take-jobs.ts). Default true.
   */
  readonly fetches?: boolean;
  /**
   * Fetches up to `limit` jobs in place of pg-boss's fetch (a subscription queue's consumer:
   * fetchJobs, in the order of our index on pg-boss's table, leaving some messages to a
   * transactional consumer). Absent: pg-boss's own fetch (the timers' queues).
   */
  readonly fetchInstead?: (limit: number) => Promise<QueueJob[]>;
}

/** What the bus holds of any consumer of a queue: woken by the queue's NOTIFYs, stopped with it. */
export interface Consumer {
  /** Fetch now rather than at the next poll. */
  wake(): void;
  /** Fetches nothing more and resolves once the handlers already running have finished. */
  stop(): Promise<void>;
}

export interface QueueConsumer extends Consumer {
  /**
   * Runs jobs already marked `active` (startJobsAgain) as fetched ones run, beside the fetched
   * ones; resolves once each one's outcome is recorded. Refused once stopping: they stay active
   * and pg-boss's maintenance puts them back when their lock expires.
   */
  runJobs(jobs: readonly QueueJob[]): Promise<void>;
}

/**
 * How long to wait before fetching again after `failures` failed fetches in a row: 100 ms,
 * doubling, at most the safety-net poll interval (a database that is back is found soon; one
 * that stays broken costs a fetch and a warning per poll interval).
 */
export function fetchRetryDelay(failures: number, pollIntervalMs: number): number {
  return Math.min(pollIntervalMs, 100 * 2 ** Math.min(failures - 1, 20));
}

/** Completions recorded in one statement at most. */
const maxCompletionGroup = 500;

/**
 * Our own fetch loop over pg-boss primitives (fetch / fail, and a delete of done jobs) rather
 * than `work()`:
 * - work() completes or fails a job after the handler WITHOUT awaiting it, so a failed job with
 *   no retry delay can be refetched while the old completion is still in flight; we await both:
 *   a handler's slot is freed only once its outcome is recorded;
 * - successes are group-committed: those finishing while a completion is in flight are recorded
 *   together by the next one (one statement for many jobs); failures stay one by one;
 * - a job that succeeded is DELETED, not marked `completed` as `boss.complete` does (issue 29):
 *   that UPDATE rewrote the whole row with its message (a non-HOT update: `state` is in the
 *   partial indexes of pg-boss's job table, so every index got a new entry too), and pg-boss
 *   maintenance later copied the row into `pgboss.archive` (after `archiveCompletedAfterSeconds`,
 *   12 h by default) and deleted it again. Measured on bench:orchestrator, the job lifecycle
 *   was half the WAL of a step (two queues per step). Nothing reads completed jobs: the bus
 *   dedupes on its own keys (publish-message.ts) and the timers look only at jobs not yet
 *   completed (pg-boss-timers.ts). Same guard as pg-boss's `completeJobs`
 *   (node_modules/pg-boss/src/plans.js): only a job still `active`, so a job whose lock expired
 *   and that maintenance put back for a retry is left to its next delivery, as before;
 * - a failure is stored as our sanitized output, never the raw error with its stack;
 * - we renew the lock (started_on) while a handler runs, Service Bus style, so a short lock
 *   recovers a crashed consumer quickly without expiring a long, healthy handler;
 * - fetching is economical (most fetches used to come back empty): see `shouldFetch`.
 * Fetching uses `FOR UPDATE SKIP LOCKED` (ours and pg-boss's), so consumers in many processes compete.
 */
export function startQueueConsumer(options: QueueConsumerOptions): QueueConsumer {
  const { boss, queue, logger, concurrency } = options;
  const inFlight = new Set<Promise<void>>();
  const renewLockSql = `UPDATE ${bossSchema}.job SET started_on = now() WHERE name = $1 AND id = $2 AND state = 'active'`;
  // pg-boss dead-letters a failing job once retry_count reaches retry_limit: spend them all now.
  const exhaustRetriesSql = `UPDATE ${bossSchema}.job SET retry_count = retry_limit WHERE name = $1 AND id = $2 AND state = 'active'`;
  // `name = $1` first: pgboss.job is partitioned by queue name, so only this queue's partition is read.
  const deleteDoneSql = `DELETE FROM ${bossSchema}.job WHERE name = $1 AND id = ANY($2::uuid[]) AND state = 'active'`;
  const completions = createGroupCommit<string, void>({
    maxBatch: maxCompletionGroup,
    flush: async (ids) => {
      await boss.getDb().executeSql(deleteDoneSql, [queue, [...ids]]);
      return ids.map(() => undefined);
    },
  });
  // A batch of freed slots worth a fetch while the queue may still hold jobs (see shouldFetch).
  const refillSlots = Math.max(1, Math.ceil(concurrency / 2));
  let stopping = false;
  /** A NOTIFY (or a reconnect) since the last fetch: new jobs were published to this queue. */
  let notified = false;
  /** The last fetch filled every free slot: more jobs are probably waiting. */
  let backlog = true;
  let lastFetchAt = 0;
  /**
   * After failed fetches, none before this time: a fetch that fails at once (a schema or a
   * permission the statement needs is missing) would otherwise be retried at once, forever, at
   * full CPU, each failure logged (seen here: 800 MB of warnings in three minutes).
   */
  let fetchAllowedAt = 0;
  let failedFetches = 0;
  let interruptSleep: (() => void) | undefined;

  const signal = (): void => interruptSleep?.();

  const wake = (): void => {
    notified = true;
    signal();
  };

  /**
   * When to fetch, so that fetches seldom come back empty and each brings several jobs:
   * - never without a free slot;
   * - when the safety-net poll is due (a lost NOTIFY, a delayed job that became due);
   * - on a NOTIFY when the queue was drained at the last fetch: new work, fetch at once;
   * - when more jobs are probably waiting (the last fetch was full, or a NOTIFY came meanwhile):
   *   once half the slots are free or nothing runs, rather than after every finished job.
   * An empty fetch clears `backlog`, so an idle consumer sleeps until a NOTIFY or the poll.
   */
  const shouldFetch = (free: number, now: number): boolean => {
    if (free <= 0 || now < fetchAllowedAt) return false;
    if (now - lastFetchAt >= options.pollIntervalMs) return true;
    if (notified && !backlog) return true;
    return (backlog || notified) && (free >= refillSlots || inFlight.size === 0);
  };

  /**
   * Until a signal (NOTIFY, freed slot, stop) or, with a free slot, until the poll is due (after
   * a failed fetch: until the next fetch is allowed, if sooner).
   */
  const sleep = (free: number, now: number): Promise<void> =>
    new Promise((resolve) => {
      if (stopping) return resolve();
      let timer: NodeJS.Timeout | undefined;
      const done = (): void => {
        if (timer !== undefined) clearTimeout(timer);
        interruptSleep = undefined;
        resolve();
      };
      const pollAt = lastFetchAt + options.pollIntervalMs;
      const wakeAt = fetchAllowedAt > now ? Math.min(pollAt, fetchAllowedAt) : pollAt;
      if (free > 0) timer = setTimeout(done, Math.max(0, wakeAt - now));
      interruptSleep = done;
    });

  const record = async (job: QueueJob, failure: { error: unknown } | undefined): Promise<void> => {
    try {
      if (failure === undefined) await completions.submit(job.id);
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

  const run = async (job: QueueJob): Promise<void> => {
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
    let acknowledged = false;
    try {
      acknowledged = (await options.handle(job)) === "acknowledged";
    } catch (error) {
      failure = { error };
    } finally {
      clearInterval(renew);
    }
    if (!acknowledged) await record(job, failure);
  };

  const track = (job: QueueJob): Promise<void> => {
    const running: Promise<void> = run(job).finally(() => {
      inFlight.delete(running);
      signal();
    });
    inFlight.add(running);
    return running;
  };

  const loop = async (): Promise<void> => {
    while (!stopping) {
      const free = concurrency - inFlight.size;
      const now = Date.now();
      if (options.fetches === false) {
        // Nothing to poll for: only a stop or a job handed to runJobs ending wakes it.
        await sleep(0, now);
        continue;
      }
      if (!shouldFetch(free, now)) {
        await sleep(free, now);
        continue;
      }
      notified = false;
      lastFetchAt = now;
      try {
        const jobs: readonly QueueJob[] =
          options.fetchInstead === undefined
            ? await boss.fetch<unknown>(queue, { batchSize: free, includeMetadata: true })
            : await options.fetchInstead(free);
        backlog = jobs.length >= free;
        failedFetches = 0;
        for (const job of jobs) track(job);
      } catch (error) {
        failedFetches += 1;
        fetchAllowedAt = Date.now() + fetchRetryDelay(failedFetches, options.pollIntervalMs);
        logger.warn({ err: error, queue, failedFetches }, "fetch failed");
      }
    }
  };

  const looping = loop();

  return {
    wake,
    async runJobs(jobs) {
      if (stopping) throw new Error(`The consumer of ${queue} is stopping`);
      await Promise.all(jobs.map(track));
    },
    async stop() {
      stopping = true;
      signal();
      await looping;
      await Promise.all([...inFlight]);
    },
  };
}

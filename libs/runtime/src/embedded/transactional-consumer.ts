import { toSafeError } from "@matoolkit/domain";
import type { AnyKysely } from "../any-kysely.ts";
import type { Logger } from "../logger.ts";
import type { Delivery, TransactionalBatchHandler } from "../ports/index.ts";
import type { Consumer, QueueConsumer, QueueJob } from "./queue-consumer.ts";

export interface TransactionalConsumerOptions {
  readonly queue: string;
  readonly batchSize: number;
  /** Batches in flight at once, at most (TransactionalSubscription.batchesAtOnce). Default 1. */
  readonly batchesAtOnce?: number;
  /** Safety-net poll: delayed messages that became due, a lost NOTIFY. */
  readonly pollIntervalMs: number;
  readonly logger: Logger;
  readonly handleBatch: TransactionalBatchHandler;
  /** Removes up to `limit` due jobs in `trx` (takeJobs). */
  readonly take: (trx: AnyKysely, limit: number) => Promise<QueueJob[]>;
  readonly toDelivery: (job: QueueJob) => Delivery;
  /** Marks a failed batch's jobs active again, those still queued (startJobsAgain). */
  readonly startAgain: (ids: readonly string[]) => Promise<QueueJob[]>;
  /** Runs them one by one, with redelivery and dead letters (a queue consumer that never fetches). */
  readonly fallback: QueueConsumer;
}

/**
 * The loop behind MessageBus.consumeInTransaction on the embedded bus: batches, each taken inside
 * the handler's transaction (take-jobs.ts). Starts a batch when messages were published to the
 * queue (`wake`, a NOTIFY), when a batch came back full (more are probably waiting), or when the
 * poll is due; sleeps otherwise. With `batchesAtOnce` above 1, a batch that comes back full
 * starts two (itself again and one more) up to that many in flight, so a backlog is worked in
 * parallel while a wake on an idle queue still costs one batch: a batch per consumer per wake
 * (four loops, tried first) made most of them empty transactions (3 statements each).
 */
export function startTransactionalConsumer(options: TransactionalConsumerOptions): Consumer {
  const { queue, logger, batchSize } = options;
  const batchesAtOnce = options.batchesAtOnce ?? 1;
  let stopping = false;
  /** Batches to start, as soon as slots allow: a wake or the poll asks one, a full batch two. */
  let wanted = 1;
  let lastRunAt = 0;
  /** No batch before then: the last one failed before it took anything (the database is away). */
  let backoffUntil = 0;
  const inFlight = new Set<Promise<void>>();
  let interruptSleep: (() => void) | undefined;

  const signal = (): void => interruptSleep?.();

  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      if (stopping) return resolve();
      const done = (): void => {
        clearTimeout(timer);
        interruptSleep = undefined;
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      interruptSleep = done;
    });

  /** One batch; the number of jobs it took (its transaction may have failed after). */
  const runBatch = async (): Promise<number> => {
    let taken: QueueJob[] | undefined;
    try {
      await options.handleBatch(async (trx) => {
        if (taken !== undefined) throw new Error(`consumeInTransaction(${queue}): take once per batch`);
        taken = [];
        taken = await options.take(trx, batchSize);
        return taken.map(options.toDelivery);
      });
      return taken?.length ?? 0;
    } catch (error) {
      const ids = (taken ?? []).map((job) => job.id);
      const safe = toSafeError(error);
      logger.warn(
        { queue, messages: ids.length, reason: safe.reason },
        `a transactional batch failed, its messages go one by one: ${safe.message}`,
      );
      if (ids.length === 0) {
        // Failed before it took anything (the database is away): wait, do not spin.
        backoffUntil = Date.now() + options.pollIntervalMs;
        return 0;
      }
      // Awaited, so a message that broke this batch is settled (done, retried later or
      // dead-lettered) before this batch's slot could take it again.
      await options.fallback.runJobs(await options.startAgain(ids));
      return 0;
    }
  };

  const start = (): void => {
    wanted -= 1;
    lastRunAt = Date.now();
    const running: Promise<void> = runBatch()
      .then(
        (taken) => {
          // Full: more are probably waiting; this slot again, and one more while there is room.
          if (taken >= batchSize) wanted = Math.min(batchesAtOnce, wanted + 2);
        },
        (error: unknown) => {
          // The fallback itself failed (marking the jobs active): they are still queued for a later batch.
          logger.error({ err: error, queue }, "could not hand a failed batch's messages on");
        },
      )
      .finally(() => {
        inFlight.delete(running);
        signal();
      });
    inFlight.add(running);
  };

  const loop = async (): Promise<void> => {
    while (!stopping) {
      const now = Date.now();
      if (wanted <= 0 && inFlight.size === 0 && now - lastRunAt >= options.pollIntervalMs) wanted = 1;
      const backingOff = now < backoffUntil;
      if (wanted > 0 && inFlight.size < batchesAtOnce && !backingOff) {
        start();
        continue;
      }
      // Until a wake, a batch's end, the end of a back-off or the poll.
      const until =
        inFlight.size > 0
          ? now + options.pollIntervalMs
          : backingOff
            ? backoffUntil
            : lastRunAt + options.pollIntervalMs;
      await sleep(until - now);
    }
    await Promise.all([...inFlight]);
  };

  const looping = loop();

  return {
    wake() {
      wanted = Math.max(wanted, 1);
      signal();
    },
    async stop() {
      stopping = true;
      signal();
      await looping;
      await options.fallback.stop();
    },
  };
}

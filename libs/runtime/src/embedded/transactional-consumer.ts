import { toSafeError } from "@matoolkit/domain";
import type { AnyKysely } from "../any-kysely.ts";
import type { Logger } from "../logger.ts";
import type { Delivery, TransactionalBatchHandler } from "../ports/index.ts";
import type { Consumer, QueueConsumer, QueueJob } from "./queue-consumer.ts";

export interface TransactionalConsumerOptions {
  readonly queue: string;
  readonly batchSize: number;
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
 * The loop behind MessageBus.consumeInTransaction on the embedded bus: one batch at a time, each
 * taken inside the handler's transaction (take-jobs.ts). Runs a batch when messages were
 * published to the queue (`wake`, a NOTIFY), when the last batch was full (more are probably
 * waiting), or when the poll is due; sleeps otherwise.
 */
export function startTransactionalConsumer(options: TransactionalConsumerOptions): Consumer {
  const { queue, logger, batchSize } = options;
  let stopping = false;
  let notified = true;
  let backlog = true;
  let lastRunAt = 0;
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
        await sleep(options.pollIntervalMs);
        return 0;
      }
      // Awaited, so batches stay one at a time and a message that broke this one is settled
      // (done, retried later or dead-lettered) before the next batch could take it again.
      await options.fallback.runJobs(await options.startAgain(ids));
      return 0;
    }
  };

  const loop = async (): Promise<void> => {
    while (!stopping) {
      const now = Date.now();
      if (!notified && !backlog && now - lastRunAt < options.pollIntervalMs) {
        await sleep(lastRunAt + options.pollIntervalMs - now);
        continue;
      }
      notified = false;
      lastRunAt = now;
      try {
        backlog = (await runBatch()) >= batchSize;
      } catch (error) {
        // The fallback itself failed (marking the jobs active): they are still queued for a later batch.
        backlog = false;
        logger.error({ err: error, queue }, "could not hand a failed batch's messages on");
        await sleep(options.pollIntervalMs);
      }
    }
  };

  const looping = loop();

  return {
    wake() {
      notified = true;
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

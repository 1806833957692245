import { MatoolkitError, reasonCodes, toSafeError } from "@matoolkit/domain";
import { sql } from "kysely";
import type PgBoss from "pg-boss";
import { z } from "zod";
import type { Logger } from "../logger.ts";
import { MAX_DELIVERY_ATTEMPTS } from "../ports/index.ts";
import type { Delivery, DeliveryHandler, Subscription, TakeOnly } from "../ports/index.ts";
import { busSchema } from "./bus-tables.ts";
import type { ResolvedBusTuning } from "./bus-tuning.ts";
import { messageEnvelopeSchema, topicSchema } from "./message-envelope.ts";
import type { FailureOutput } from "./message-envelope.ts";
import { startQueueConsumer } from "./queue-consumer.ts";
import { setQueueFillFactor } from "./queue-fill-factor.ts";
import { fetchJobs } from "./take-jobs.ts";
import { dropPgBossFetchIndex } from "./queue-fetch-index.ts";
import type { DeliveryTicket, DeliveryTickets } from "./settle-deliveries.ts";
import type { QueueConsumer, QueueJob } from "./queue-consumer.ts";
import { assertSubscriptionName, deadLetterQueue, subscriptionQueue } from "./queue-names.ts";
import type { AnyKysely } from "../any-kysely.ts";

const subscriptionSchema = z.object({
  topic: topicSchema,
  name: z.string(),
  filter: z.record(z.string(), z.string()).default({}),
  concurrency: z.number().int().min(1).max(1000).default(1),
});

export interface RegisterSubscriptionInput {
  readonly boss: PgBoss;
  readonly db: AnyKysely;
  readonly logger: Logger;
  readonly tuning: ResolvedBusTuning;
  readonly subscription: Subscription;
  readonly handler: DeliveryHandler;
  /** Where the deliveries' jobs are noted, for `MessageBus.settleDelivery` (settle-deliveries.ts). */
  readonly tickets?: DeliveryTickets;
  /** false: the consumer runs only the jobs handed to it (QueueConsumerOptions.fetches). */
  readonly fetches?: boolean;
  /**
   * The messages of this queue a transactional consumer takes (TransactionalSubscription.only),
   * which this one leaves to it; asked at every fetch. Undefined: it fetches every message.
   */
  readonly leftOut?: (queue: string) => TakeOnly | undefined;
}

/**
 * Makes the subscription durable (its queue, dead-letter queue and filter row outlive this
 * process, so publishers elsewhere fan out to it) without consuming it: messages published from
 * now on wait in its queue until a consumer starts (a worker pool scaled to zero).
 */
export async function declareSubscription(
  input: Omit<RegisterSubscriptionInput, "handler" | "logger">,
): Promise<{ queue: string }> {
  const { topic, name, filter } = subscriptionSchema.parse(input.subscription);
  assertSubscriptionName(name);
  const { boss, tuning } = input;
  const queue = subscriptionQueue(topic, name);
  const dlq = deadLetterQueue(topic, name);

  const queueOptions: PgBoss.Queue = {
    name: queue,
    // retry_count counts redeliveries: MAX_DELIVERY_ATTEMPTS deliveries = 1 + (MAX - 1) retries.
    retryLimit: MAX_DELIVERY_ATTEMPTS - 1,
    retryDelay: tuning.retryDelaySeconds,
    retryBackoff: tuning.retryBackoff && tuning.retryDelaySeconds > 0,
    expireInSeconds: tuning.lockSeconds,
    deadLetter: dlq,
  };
  // The dead-letter queue first: the subscription queue references it.
  await boss.createQueue(dlq, { name: dlq, retryLimit: 0 });
  await boss.createQueue(queue, queueOptions);
  // createQueue keeps an existing queue as it was; align it with this process's settings.
  await boss.updateQueue(queue, queueOptions);
  await setQueueFillFactor(input.db, queue);
  await dropPgBossFetchIndex(input.db, queue);
  await sql`
    INSERT INTO ${sql.table(`${busSchema}.subscriptions`)} AS s (topic, name, filter, queue)
    VALUES (${topic}, ${name}, ${JSON.stringify(filter)}::jsonb, ${queue})
    ON CONFLICT (topic, name) DO UPDATE SET filter = EXCLUDED.filter, queue = EXCLUDED.queue, updated_at = now()
  `.execute(input.db);
  return { queue };
}

/** Declares the subscription (see {@link declareSubscription}) and starts consuming it here. */
export async function registerSubscription(
  input: RegisterSubscriptionInput,
): Promise<{ queue: string; consumer: QueueConsumer }> {
  const { concurrency } = subscriptionSchema.parse(input.subscription);
  const { boss, tuning } = input;
  const { queue } = await declareSubscription(input);

  const consumer = startQueueConsumer({
    boss,
    queue,
    concurrency,
    pollIntervalMs: tuning.pollingIntervalSeconds * 1000,
    lockSeconds: tuning.lockSeconds,
    logger: input.logger,
    ...(input.fetches === undefined ? {} : { fetches: input.fetches }),
    // Ours, not pg-boss's fetch: in the order of our index on its table (take-jobs.ts). The
    // transactional consumer's kind is asked at every fetch: it may start after this one.
    fetchInstead: (limit) => fetchJobs(input.db, queue, limit, input.leftOut?.(queue)),
    handle: async (job) => {
      const delivery = toDelivery(job);
      const ticket: DeliveryTicket = { queue, jobId: job.id, state: "open" };
      input.tickets?.set(delivery, ticket);
      try {
        await input.handler(delivery);
      } catch (error) {
        // Settled, then failed: the message is consumed already; there is nothing to redeliver.
        if (ticket.state === "acknowledged") return "acknowledged";
        throw error;
      }
      return ticket.state === "acknowledged" ? "acknowledged" : "done";
    },
    isPoison: (error) => error instanceof MatoolkitError && !error.retriable,
    failureOutput: (error, job): FailureOutput => {
      const safe = toSafeError(error);
      return { reason: safe.reason, message: safe.message, deliveryCount: job.retryCount + 1 };
    },
  });
  return { queue, consumer };
}

/** The delivery a job of a subscription queue stands for; a non-retriable error if unreadable. */
export function toDelivery(job: QueueJob): Delivery {
  const parsed = messageEnvelopeSchema.safeParse(job.data);
  if (!parsed.success) {
    throw new MatoolkitError(reasonCodes.messageInvalid, "The stored message envelope is unreadable", {
      retriable: false,
    });
  }
  return { ...parsed.data, deliveryCount: job.retryCount + 1 };
}

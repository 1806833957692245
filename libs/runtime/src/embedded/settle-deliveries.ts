import { sql } from "kysely";
import type { Delivery } from "../ports/index.ts";
import { bossSchema } from "./bus-tables.ts";
import { completeKeysStatement, type CompletionRecord } from "./idempotency-key-statements.ts";
import type { CheckedMessage } from "./message-envelope.ts";
import { publishMessages, type PublishContext, type PublishOutcome } from "./publish-message.ts";

/**
 * The pg-boss job behind a delivery this bus handed out, and whether its handler acknowledged it
 * already (then the consumer does not delete it again). Keyed by the delivery object itself: the
 * handler chain (telemetry, the bus's own wrapper) passes that one object along.
 */
export interface DeliveryTicket {
  readonly queue: string;
  readonly jobId: string;
  /** `settling` while a settle statement is in flight: a second settle of the delivery is refused. */
  state: "open" | "settling" | "acknowledged";
}

export type DeliveryTickets = WeakMap<Delivery, DeliveryTicket>;

export interface SettleItem {
  readonly ticket: DeliveryTicket;
  readonly outcome: CompletionRecord;
  readonly messages: readonly CheckedMessage[];
}

/**
 * ONE statement for many handlers' ends (MessageBus.settleDelivery; issue 29): each outcome is
 * recorded as the idempotency store's `complete` records it (the same statement text), the
 * messages are published as `publishMany` publishes them, and the delivered jobs are deleted as
 * the queue consumer deletes a job it completed (only while still `active`: a job whose lock ran
 * out and that maintenance put back for a retry is left to its next delivery, which finds the
 * key completed and republishes the recorded outcome; the result's consumer ignores the copy, as
 * the settlement's own messages carry no dedupe key when published `onceByTransaction`). One
 * statement is one transaction: all of it, or none of it.
 *
 * Jobs are deleted queue by queue, never by `name = ANY AND id = ANY`: one message's jobs in
 * several queues share an id, and a sibling in another queue of the group is not ours to delete.
 */
export async function settleDeliveries(
  context: PublishContext,
  items: readonly SettleItem[],
): Promise<PublishOutcome[][]> {
  const messages = items.flatMap((item) => item.messages);
  // One DELETE per queue, `name = $1 AND id = ANY($2)` as the queue consumer's own: pgboss.job
  // is partitioned by queue name, and a join on (name, id) pairs is planned without pruning —
  // every settle then read the whole worker-jobs partition, 10,000 jobs deep at 10,000 members.
  const idsByQueue = new Map<string, string[]>();
  for (const { ticket } of items) {
    const ids = idsByQueue.get(ticket.queue) ?? [];
    ids.push(ticket.jobId);
    idsByQueue.set(ticket.queue, ids);
  }
  const deletes = [...idsByQueue].map(
    ([queue, ids], index) => sql`, ${sql.raw(`acknowledged_${index}`)} AS (
      DELETE FROM ${sql.table(`${bossSchema}.job`)}
      WHERE name = ${queue} AND id = ANY(${ids}::uuid[]) AND state = 'active'
    )`,
  );
  const alongside = sql`, recorded AS (${completeKeysStatement(items.map((item) => item.outcome))}
    )${sql.join(deletes, sql``)}`;
  const outcomes = await publishMessages(context, messages, alongside);
  const perItem: PublishOutcome[][] = [];
  let next = 0;
  for (const item of items) {
    perItem.push(outcomes.slice(next, next + item.messages.length));
    next += item.messages.length;
  }
  return perItem;
}

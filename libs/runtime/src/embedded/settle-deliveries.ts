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
 * key completed and republishes the recorded outcome, dropped as a duplicate). One statement is
 * one transaction: all of it, or none of it.
 *
 * Jobs are matched by (queue, id) pairs, not `name = ANY AND id = ANY`: one message's jobs in
 * several queues share an id, and a sibling in another queue of the group is not ours to delete.
 */
export async function settleDeliveries(
  context: PublishContext,
  items: readonly SettleItem[],
): Promise<PublishOutcome[][]> {
  const messages = items.flatMap((item) => item.messages);
  const alongside = sql`, recorded AS (${completeKeysStatement(items.map((item) => item.outcome))}
    ), acknowledged AS (
      DELETE FROM ${sql.table(`${bossSchema}.job`)} AS j
      USING unnest(${items.map((item) => item.ticket.queue)}::text[], ${items.map((item) => item.ticket.jobId)}::uuid[])
        AS d(name, id)
      WHERE j.name = d.name AND j.id = d.id AND j.state = 'active'
    )`;
  const outcomes = await publishMessages(context, messages, alongside);
  const perItem: PublishOutcome[][] = [];
  let next = 0;
  for (const item of items) {
    perItem.push(outcomes.slice(next, next + item.messages.length));
    next += item.messages.length;
  }
  return perItem;
}

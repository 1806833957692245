import type { Insertable, Selectable, GeneratedAlways } from "kysely";
import type { CreatedAt, JsonColumn, JsonObject, NullableTimestamp } from "./column-types.ts";

/**
 * Transactional outbox: messages written in the same transaction as the state change that caused
 * them; the runtime's relay publishes a batch of rows, then deletes them. All SQL on this table
 * lives in outbox.repository.ts (enqueueOutbox, claimOutboxBatch, deleteOutbox).
 */
export interface OutboxTable {
  id: GeneratedAlways<number>;
  messageId: string;
  topic: string;
  properties: JsonColumn<JsonObject>;
  body: JsonColumn<unknown>;
  /** Scheduled delivery (retry-check); null means now. */
  deliverAt: NullableTimestamp;
  createdAt: CreatedAt;
}

export type OutboxRow = Selectable<OutboxTable>;
export type NewOutboxRow = Insertable<OutboxTable>;

import { sql } from "kysely";
import { camelCaseRows } from "./camel-case.ts";
import type { Db } from "./connection.ts";
import type { EventEntity, StatusEvent } from "./events.table.ts";

/** Events keep a short reason; callers pass reason codes, never free text with PII in it. */
export const MAX_EVENT_REASON_LENGTH = 200;

export function shortReason(reason: string): string {
  return reason.slice(0, MAX_EVENT_REASON_LENGTH);
}

export interface ListEventsPage {
  /** Only events after this id: a timeline client polls with the last id it has seen. */
  readonly afterId?: number;
  readonly limit: number;
}

/** A batch's status timeline, oldest first. */
export async function listEvents(db: Db, batchId: number, page: ListEventsPage): Promise<StatusEvent[]> {
  let query = db.selectFrom("events").selectAll().where("batchId", "=", batchId);
  if (page.afterId !== undefined) query = query.where("id", ">", page.afterId);
  return query.orderBy("id").limit(page.limit).execute();
}

/**
 * A timeline event with the names an operator reads it by (the dashboard's batch page): the
 * member's key for member and step events, the phase's name for phase and step events, the
 * runbook's step name for step and init events; null where the entity has none.
 */
export type NamedStatusEvent = StatusEvent & {
  readonly memberKey: string | null;
  readonly phaseName: string | null;
  readonly stepName: string | null;
};

/**
 * listEvents with each event's names, joined in the same statement (by primary key per row: a
 * page of the timeline costs what it did, not a look-up per event).
 */
export async function listNamedEvents(
  db: Db,
  batchId: number,
  page: ListEventsPage,
): Promise<NamedStatusEvent[]> {
  const result = await sql<Record<string, unknown>>`
    SELECT e.*, m.member_key, p.phase_name,
      -- a for_each value (issue 30) by its position: add-to-group [2/5]
      COALESCE(s.step_name || CASE WHEN s.item_count IS NULL THEN ''
                 ELSE ' [' || (s.item_index + 1) || '/' || s.item_count || ']' END,
               i.step_name) AS step_name
    FROM events e
    LEFT JOIN step_executions s ON e.entity = 'step' AND s.id = e.entity_id
    LEFT JOIN init_executions i ON e.entity = 'init' AND i.id = e.entity_id
    LEFT JOIN phase_executions p
      ON p.id = CASE e.entity WHEN 'phase' THEN e.entity_id WHEN 'step' THEN s.phase_execution_id END
    LEFT JOIN batch_members m
      ON m.id = CASE e.entity WHEN 'member' THEN e.entity_id WHEN 'step' THEN s.batch_member_id END
    WHERE e.batch_id = ${batchId} AND e.id > ${page.afterId ?? 0}
    ORDER BY e.id
    LIMIT ${page.limit}
  `.execute(db);
  return camelCaseRows<NamedStatusEvent>(result.rows);
}

export interface AppendEventInput {
  readonly batchId: number;
  readonly entity: EventEntity;
  readonly entityId: number;
  readonly fromStatus: string | null;
  readonly toStatus: string;
  /** Truncated to MAX_EVENT_REASON_LENGTH; a reason code or a few words, never member data. */
  readonly reason: string;
}

/**
 * Appends an event that is not a status change made by a guarded transition (those write their
 * own, in the same statement). With `fromStatus === toStatus` it is an annotation of the entity
 * in its current status, e.g. a rollback job dispatched for a failed step.
 */
export async function appendEvent(db: Db, input: AppendEventInput): Promise<StatusEvent> {
  return db
    .insertInto("events")
    .values({ ...input, reason: shortReason(input.reason) })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export interface AuditEventInput {
  /** Null for writes outside any batch (runbook publish, automation switch). */
  readonly batchId: number | null;
  readonly entity: EventEntity;
  readonly entityId: number;
  /** Null when the write created the entity. */
  readonly fromStatus: string | null;
  readonly toStatus: string;
  /** A few words, never member data; truncated to MAX_EVENT_REASON_LENGTH. */
  readonly reason: string;
  /** The operator's identity (principal.identity): what makes it an audit row. */
  readonly actor: string;
}

/**
 * The audit row of an operator's write that is not a guarded status transition (those record
 * their actor themselves): a publish, a deactivation, the automation switch, members added.
 * Call it in the write's own transaction, so the change and who made it commit together.
 */
export async function recordAuditEvent(db: Db, input: AuditEventInput): Promise<StatusEvent> {
  return db
    .insertInto("events")
    .values({ ...input, reason: shortReason(input.reason) })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export interface AuditPageQuery {
  /** Only rows with a larger id (0: from the start). */
  readonly afterId: number;
  readonly limit: number;
  readonly actor?: string | undefined;
  readonly batchId?: number | undefined;
}

/**
 * The audit trail: events written on an operator's behalf (actor set), oldest first, a page at a
 * time by id. Reads the partial index events_audit_idx (only rows with an actor), or with `batchId`
 * the batch's timeline index.
 */
export async function listAuditEvents(db: Db, page: AuditPageQuery): Promise<StatusEvent[]> {
  let query = db
    .selectFrom("events")
    .selectAll()
    .where("actor", "is not", null)
    .where("id", ">", page.afterId);
  if (page.actor !== undefined) query = query.where("actor", "=", page.actor);
  if (page.batchId !== undefined) query = query.where("batchId", "=", page.batchId);
  return query.orderBy("id").limit(page.limit).execute();
}

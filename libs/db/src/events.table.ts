import type { Insertable, Selectable, GeneratedAlways } from "kysely";
import type { CreatedAt } from "./column-types.ts";

/**
 * The kinds of rows whose status changes are recorded. `runbook` and `automation` rows are audit
 * only (migration 0011): an operator published or deactivated a runbook version (entity_id = the
 * version's runbooks.id; to_status `active` / `inactive`) or switched automation (entity_id = the
 * active version's id; `enabled` / `disabled`); their batch_id is null.
 */
export type EventEntity =
  | "batch"
  | "member"
  | "phase"
  | "step"
  | "init"
  | "runbook"
  | "automation"
  /** Audit only (migration 0012): a webhook created (`active`), deleted (`deleted`) or pinged (annotation). */
  | "webhook"
  /** Migration 0020 (issue 31): an alert raised (`open`) or resolved (`resolved`); batch_id set when it is about one. */
  | "alert";

/**
 * Append-only audit timeline: one row per status change, written in the same statement. A row
 * whose from_status equals its to_status is an annotation, not a change: something happened to
 * the entity in that status (a rollback job sent for a failed step, see rollback-events.ts).
 */
export interface EventsTable {
  id: GeneratedAlways<number>;
  batchId: number | null;
  entity: EventEntity;
  entityId: number;
  /** Null when the row was created. */
  fromStatus: string | null;
  toStatus: string;
  /** Short, sanitised reason (a reason code or a few words); never secrets or member PII. */
  reason: string | null;
  /** The operator whose request made this change (their token's identity); null for the system's own. */
  actor: string | null;
  at: CreatedAt;
}

export type StatusEvent = Selectable<EventsTable>;
export type NewStatusEvent = Insertable<EventsTable>;

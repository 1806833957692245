import { batchMachine, type BatchEvent, type BatchStatus } from "@matoolkit/domain";
import { sql } from "kysely";
import type { Db } from "./connection.ts";
import type { Batch, BatchUpdate } from "./batches.table.ts";
import { camelCaseRows, toColumnNames } from "./camel-case.ts";
import { applyTransition } from "./transition.ts";

export interface NewBatchInput {
  readonly runbookId: number;
  /** Null for manual batches. */
  readonly batchStartTime: Date | null;
  readonly isManual: boolean;
  readonly createdBy: string | null;
  /** The change ticket / request id, already checked (checkExternalRef); omitted or null: none. */
  readonly externalRef?: string | null;
  /** The operator creating it (the 'created' event's actor); omitted when the scheduler does. */
  readonly actor?: string;
}

/** A batch with the runbook version it runs. */
export type BatchWithRunbook = Batch & { runbookName: string; runbookVersion: number; yamlContent: string };
export type BatchListItem = Batch & { runbookName: string; runbookVersion: number };

export interface ListBatchesFilter {
  readonly runbookName?: string;
  readonly status?: BatchStatus;
  /** Exactly this initiator (batches.created_by); automated batches have none. */
  readonly createdBy?: string;
  /** Created (detected_at) at or after / strictly before. */
  readonly createdAfter?: Date;
  readonly createdBefore?: Date;
  /** Exactly this reference (case-sensitive: ticket ids are quoted as written). */
  readonly externalRef?: string;
  readonly limit: number;
  readonly offset: number;
}

/** Creates a batch in `detected` and its 'created' event, in one statement. */
export async function insertBatch(db: Db, input: NewBatchInput): Promise<Batch> {
  const result = await sql<Record<string, unknown>>`
    WITH inserted AS (
      INSERT INTO batches (runbook_id, batch_start_time, is_manual, created_by, external_ref)
      VALUES (${input.runbookId}, ${input.batchStartTime}, ${input.isManual}, ${input.createdBy},
        ${input.externalRef ?? null})
      RETURNING *
    ), logged AS (
      INSERT INTO events (batch_id, entity, entity_id, from_status, to_status, reason, actor)
      SELECT id, 'batch', id, NULL, status, ${createdReason(input.externalRef ?? null)}::text,
        ${input.actor ?? null}::text
      FROM inserted
    )
    SELECT * FROM inserted
  `.execute(db);
  const [batch] = camelCaseRows<Batch>(result.rows);
  if (batch === undefined) throw new Error("insert into batches returned no row");
  return batch;
}

/** The 'created' event's reason; names the batch's change ticket when it was given (issue 31). */
function createdReason(externalRef: string | null): string {
  return externalRef === null ? "created" : `created (external ref ${externalRef})`;
}

export async function getBatch(db: Db, id: number): Promise<Batch | undefined> {
  return db.selectFrom("batches").selectAll().where("id", "=", id).executeTakeFirst();
}

export async function getBatchWithRunbook(db: Db, id: number): Promise<BatchWithRunbook | undefined> {
  return db
    .selectFrom("batches")
    .innerJoin("runbooks", "runbooks.id", "batches.runbookId")
    .selectAll("batches")
    .select(["runbooks.name as runbookName", "runbooks.version as runbookVersion", "runbooks.yamlContent"])
    .where("batches.id", "=", id)
    .executeTakeFirst();
}

/** Ids of every batch not in a terminal state: the batches whose workflows must be running. */
export async function listUnfinishedBatchIds(db: Db): Promise<number[]> {
  const rows = await db
    .selectFrom("batches")
    .select("id")
    .where("status", "not in", [...batchMachine.terminal])
    .orderBy("id")
    .execute();
  return rows.map((row) => row.id);
}

/**
 * Locks the batch row until the transaction ends and returns it as committed. Handlers that
 * create executions take it before reading the status, so they and a batch cancel take turns:
 * either the cancel waits and then sees (and cancels) the new rows, or the handler waits and
 * then sees `cancelled`. `share` lets such handlers run side by side; `update` serialises them
 * (for a handler that may itself transition the batch, which would upgrade a shared lock and
 * deadlock against a twin). Neither mode blocks the foreign-key checks of event and step inserts.
 */
export async function lockBatch(db: Db, id: number, mode: "share" | "update"): Promise<Batch | undefined> {
  const query = db.selectFrom("batches").selectAll().where("id", "=", id);
  return (mode === "share" ? query.forShare() : query.forNoKeyUpdate()).executeTakeFirst();
}

/** Newest first. */
export async function listBatches(db: Db, filter: ListBatchesFilter): Promise<BatchListItem[]> {
  let query = db
    .selectFrom("batches")
    .innerJoin("runbooks", "runbooks.id", "batches.runbookId")
    .selectAll("batches")
    .select(["runbooks.name as runbookName", "runbooks.version as runbookVersion"]);
  if (filter.runbookName !== undefined) query = query.where("runbooks.name", "=", filter.runbookName);
  if (filter.status !== undefined) query = query.where("batches.status", "=", filter.status);
  if (filter.createdBy !== undefined) query = query.where("batches.createdBy", "=", filter.createdBy);
  if (filter.createdAfter !== undefined) query = query.where("batches.detectedAt", ">=", filter.createdAfter);
  if (filter.createdBefore !== undefined)
    query = query.where("batches.detectedAt", "<", filter.createdBefore);
  if (filter.externalRef !== undefined) query = query.where("batches.externalRef", "=", filter.externalRef);
  return query.orderBy("batches.id", "desc").limit(filter.limit).offset(filter.offset).execute();
}

export interface BatchTransitionOptions {
  readonly reason?: string;
  /** The operator whose request this is (events.actor); omitted for the system's own changes. */
  readonly actor?: string;
  /** Overrides of the columns the event sets by default (e.g. initDispatchedAt from a clock). */
  readonly set?: Pick<
    BatchUpdate,
    "initDispatchedAt" | "currentPhase" | "outcome" | "succeededMembers" | "failedMembers"
  >;
}

/** Applies `event` if the batch is in one of its source states; undefined when it is not. */
export async function transitionBatch(
  db: Db,
  id: number,
  event: BatchEvent,
  options: BatchTransitionOptions = {},
): Promise<Batch | undefined> {
  const { from, to } = batchMachine.transitions[event];
  const [row] = await applyTransition<Batch>(
    db,
    {
      table: "batches",
      entity: "batch",
      batchIdColumn: "id",
      from,
      to,
      set: { ...defaultColumns(event), ...toColumnNames(options.set ?? {}) },
      reason: options.reason,
      actor: options.actor,
    },
    sql`id = ${id}`,
  );
  return row;
}

function defaultColumns(event: BatchEvent): Record<string, unknown> {
  switch (event) {
    case "dispatch_init":
      return { init_dispatched_at: sql`now()` };
    case "activate":
    case "complete":
    case "fail":
    case "cancel":
    case "pause":
    case "resume":
      return {};
    case "reopen":
      // Ended again later, with the outcome of that end.
      return { outcome: null, succeeded_members: null, failed_members: null };
    default: {
      const unreachable: never = event;
      throw new Error(`unknown batch event ${String(unreachable)}`);
    }
  }
}

/** Manual batches: the phase an admin advanced to. Not a status change. */
export async function setCurrentPhase(
  db: Db,
  id: number,
  phaseName: string | null,
): Promise<Batch | undefined> {
  return db
    .updateTable("batches")
    .set({ currentPhase: phaseName })
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirst();
}

import { batchMachine } from "@matoolkit/domain";
import { sql } from "kysely";
import type { PurgeMode } from "./batches.table.ts";
import type { Db } from "./connection.ts";
import { shortReason } from "./events.repository.ts";

/**
 * Retention (issue 31 item 2): the statements of the purge of ended batches. Every statement
 * touches at most `chunk` rows and commits on its own (no transaction spans a batch), so a purge
 * of a 100,000-member batch never holds locks for long; each chunk only picks rows that still hold
 * data, so running it again after a crash (or twice at once) redoes nothing. The batch is marked
 * purged last, by {@link markBatchPurged}: until then the job keeps choosing it.
 *
 * What holds member data: batch_members.data_json / worker_data_json, and the executions'
 * params_json, result_json, error_message (a worker error may quote a member value) and, for
 * for_each steps, item_value. Event reasons (never member data, events.table.ts), webhook payloads
 * (member row ids and reason codes only, notification.ts) and error codes are kept.
 */

export interface PurgeCandidate {
  readonly batchId: number;
  readonly status: string;
  /** When the batch reached its current (terminal) status: its last status event. */
  readonly endedAt: Date;
  readonly members: number;
}

const TERMINAL = sql.join(batchMachine.terminal.map((state) => sql`${state}::text`));

/**
 * Ended batches (completed, failed, cancelled) not purged yet whose end is before `endedBefore`,
 * oldest id first, at most `limit`. The end is the batch's last event into its current status (a
 * redriven batch ends again later); a batch without such an event is never chosen.
 */
export async function listPurgeCandidates(
  db: Db,
  options: { readonly endedBefore: Date; readonly limit: number; readonly afterId?: number },
): Promise<PurgeCandidate[]> {
  const result = await sql<{ batch_id: number; status: string; ended_at: Date; members: string }>`
    SELECT b.id AS batch_id, b.status, ended.at AS ended_at,
      (SELECT count(*) FROM batch_members m WHERE m.batch_id = b.id) AS members
    FROM batches b
    CROSS JOIN LATERAL (
      SELECT max(e.at) AS at FROM events e
      WHERE e.batch_id = b.id AND e.entity = 'batch' AND e.to_status = b.status
        AND e.from_status IS DISTINCT FROM e.to_status
    ) ended
    WHERE b.purged_at IS NULL AND b.status IN (${TERMINAL})
      AND b.id > ${options.afterId ?? 0}
      AND ended.at < ${options.endedBefore}
    ORDER BY b.id
    LIMIT ${options.limit}
  `.execute(db);
  return result.rows.map((row) => ({
    batchId: row.batch_id,
    status: row.status,
    endedAt: row.ended_at,
    members: Number(row.members),
  }));
}

/** Empties member data of up to `chunk` members of the batch that still hold some; returns how many. */
export async function scrubMembersChunk(db: Db, batchId: number, chunk: number): Promise<number> {
  const result = await sql`
    UPDATE batch_members SET data_json = '{}'::jsonb, worker_data_json = '{}'::jsonb
    WHERE id IN (
      SELECT id FROM batch_members
      WHERE batch_id = ${batchId} AND (data_json <> '{}'::jsonb OR worker_data_json <> '{}'::jsonb)
      ORDER BY id LIMIT ${chunk}
    )
  `.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}

/**
 * Empties params, results, error messages and for_each values of up to `chunk` step (or init)
 * executions of the batch that still hold some. The for_each value becomes JSON `null`, not SQL
 * NULL: SQL NULL means "not expanded yet" (for-each.repository.ts).
 */
export async function scrubExecutionsChunk(
  db: Db,
  table: "step_executions" | "init_executions",
  batchId: number,
  chunk: number,
): Promise<number> {
  const isStep = table === "step_executions";
  const itemSet = isStep
    ? sql`, item_value = CASE WHEN item_value IS NULL THEN NULL ELSE 'null'::jsonb END`
    : sql``;
  const itemHolds = isStep ? sql` OR (item_value IS NOT NULL AND item_value <> 'null'::jsonb)` : sql``;
  const result = await sql`
    UPDATE ${sql.table(table)} SET params_json = '{}'::jsonb, result_json = NULL, error_message = NULL${itemSet}
    WHERE id IN (
      SELECT id FROM ${sql.table(table)}
      WHERE batch_id = ${batchId}
        AND (params_json <> '{}'::jsonb OR result_json IS NOT NULL OR error_message IS NOT NULL${itemHolds})
      ORDER BY id LIMIT ${chunk}
    )
  `.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}

/** The batch's rows `delete` mode removes, children first (foreign keys). */
export const DELETED_TABLES = [
  "step_executions",
  "init_executions",
  "batch_members",
  "phase_executions",
  "events",
  "batch_source_fingerprints",
] as const;
export type DeletedTable = (typeof DELETED_TABLES)[number];

/**
 * Deletes up to `chunk` of the batch's rows of `table`; returns how many. Events: only the
 * system's status changes of the batch's members, phases, steps and inits go; the batch's own
 * timeline and every audit row (an operator's action, with its actor) stay, for the record.
 */
export async function deleteBatchRowsChunk(
  db: Db,
  table: DeletedTable,
  batchId: number,
  chunk: number,
): Promise<number> {
  const keep = table === "events" ? sql` AND entity <> 'batch' AND actor IS NULL` : sql``;
  const key = table === "batch_source_fingerprints" ? sql`batch_id` : sql`id`;
  const result = await sql`
    DELETE FROM ${sql.table(table)}
    WHERE ${key} IN (
      SELECT ${key} FROM ${sql.table(table)} WHERE batch_id = ${batchId}${keep} ORDER BY ${key} LIMIT ${chunk}
    )
  `.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}

/**
 * Marks the batch purged and writes its audit row, in one transaction; false when it was already
 * marked (a concurrent purge did it) or is no longer ended (reopened by a redrive meanwhile).
 * `actor`: the operator who ran the purge; undefined for the daily job.
 */
export async function markBatchPurged(
  db: Db,
  input: {
    readonly batchId: number;
    readonly mode: PurgeMode;
    readonly members: number;
    readonly actor?: string;
  },
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const marked = await sql<{ status: string }>`
      UPDATE batches SET purged_at = now(), purge_mode = ${input.mode}
      WHERE id = ${input.batchId} AND purged_at IS NULL AND status IN (${TERMINAL})
      RETURNING status
    `.execute(trx);
    const row = marked.rows[0];
    if (row === undefined) return false;
    const what = input.mode === "scrub" ? "scrubbed" : "deleted";
    await trx
      .insertInto("events")
      .values({
        batchId: input.batchId,
        entity: "batch",
        entityId: input.batchId,
        fromStatus: row.status,
        toStatus: row.status,
        reason: shortReason(`retention: personal data ${what} (${input.members} members)`),
        actor: input.actor ?? null,
      })
      .execute();
    return true;
  });
}

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
      -- Newest first through events_batch_entity_idx: a few batch rows, not the members' events.
      SELECT e.at FROM events e
      WHERE e.batch_id = b.id AND e.entity = 'batch' AND e.to_status = b.status
        AND e.from_status IS DISTINCT FROM e.to_status
      ORDER BY e.id DESC LIMIT 1
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

/**
 * One chunk statement's work: how many rows it changed, and the largest id it looked at (the
 * next chunk starts after it, so no chunk rescans what an earlier one passed; null: none left).
 * A run that starts over (after a crash) starts at 0 and skips what is done by the row filter.
 */
export interface ChunkResult {
  readonly rows: number;
  readonly lastId: number | null;
}

export interface ChunkRange {
  readonly batchId: number;
  /** Only rows with a larger id. */
  readonly afterId: number;
  readonly chunk: number;
}

async function chunkResult(query: Promise<{ rows: { last_id: number | null; n: string | number }[] }>) {
  const row = (await query).rows[0];
  return { rows: Number(row?.n ?? 0), lastId: row?.last_id ?? null };
}

/** Empties member data of up to `chunk` members of the batch that still hold some. */
export async function scrubMembersChunk(db: Db, range: ChunkRange): Promise<ChunkResult> {
  return chunkResult(
    sql<{ last_id: number | null; n: string }>`
      WITH picked AS (
        SELECT id FROM batch_members
        WHERE batch_id = ${range.batchId} AND id > ${range.afterId}
          AND (data_json <> '{}'::jsonb OR worker_data_json <> '{}'::jsonb)
        ORDER BY id LIMIT ${range.chunk}
      ), scrubbed AS (
        UPDATE batch_members m SET data_json = '{}'::jsonb, worker_data_json = '{}'::jsonb
        FROM picked WHERE m.id = picked.id
        RETURNING m.id
      )
      SELECT max(id) AS last_id, count(*) AS n FROM scrubbed
    `.execute(db),
  );
}

/**
 * Empties params, results, error messages and for_each values of up to `chunk` step (or init)
 * executions of the batch that still hold some. The for_each value becomes JSON `null`, not SQL
 * NULL: SQL NULL means "not expanded yet" (for-each.repository.ts).
 */
export async function scrubExecutionsChunk(
  db: Db,
  table: "step_executions" | "init_executions",
  range: ChunkRange,
): Promise<ChunkResult> {
  const isStep = table === "step_executions";
  const itemSet = isStep
    ? sql`, item_value = CASE WHEN t.item_value IS NULL THEN NULL ELSE 'null'::jsonb END`
    : sql``;
  const itemHolds = isStep ? sql` OR (item_value IS NOT NULL AND item_value <> 'null'::jsonb)` : sql``;
  return chunkResult(
    sql<{ last_id: number | null; n: string }>`
      WITH picked AS (
        SELECT id FROM ${sql.table(table)}
        WHERE batch_id = ${range.batchId} AND id > ${range.afterId}
          AND (params_json <> '{}'::jsonb OR result_json IS NOT NULL OR error_message IS NOT NULL${itemHolds})
        ORDER BY id LIMIT ${range.chunk}
      ), scrubbed AS (
        UPDATE ${sql.table(table)} t
        SET params_json = '{}'::jsonb, result_json = NULL, error_message = NULL${itemSet}
        FROM picked WHERE t.id = picked.id
        RETURNING t.id
      )
      SELECT max(id) AS last_id, count(*) AS n FROM scrubbed
    `.execute(db),
  );
}

/** The batch's rows `delete` mode removes, children first (foreign keys). */
export const DELETED_TABLES = [
  "step_executions",
  "init_executions",
  "batch_members",
  "phase_executions",
  "events",
] as const;
export type DeletedTable = (typeof DELETED_TABLES)[number];

/**
 * Deletes up to `chunk` of the batch's rows of `table`. Events: only the system's status changes
 * of the batch's members, phases, steps and inits go; the batch's own timeline and every audit
 * row (an operator's action, with its actor) stay, for the record. The batch's source fingerprint
 * (a hash of its CSV, kept for the duplicate check) goes with {@link markBatchPurged}.
 */
export async function deleteBatchRowsChunk(
  db: Db,
  table: DeletedTable,
  range: ChunkRange,
): Promise<ChunkResult> {
  const keep = table === "events" ? sql` AND entity <> 'batch' AND actor IS NULL` : sql``;
  return chunkResult(
    sql<{ last_id: number | null; n: string }>`
      WITH picked AS (
        SELECT id FROM ${sql.table(table)}
        WHERE batch_id = ${range.batchId} AND id > ${range.afterId}${keep}
        ORDER BY id LIMIT ${range.chunk}
      ), deleted AS (
        DELETE FROM ${sql.table(table)} t USING picked WHERE t.id = picked.id RETURNING t.id
      )
      SELECT max(id) AS last_id, count(*) AS n FROM deleted
    `.execute(db),
  );
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
    if (input.mode === "delete") {
      await sql`DELETE FROM batch_source_fingerprints WHERE batch_id = ${input.batchId}`.execute(trx);
    }
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

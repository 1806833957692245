import { sql } from "kysely";
import { inFlightBatchStates } from "./automated-batches.repository.ts";
import type { JsonObject } from "./column-types.ts";
import type { Db } from "./connection.ts";
import type { BatchMember } from "./members.table.ts";
import { applyTransition } from "./transition.ts";

/**
 * Set-based member synchronisation (000 "Member Synchronization", MemberDiffService): the data
 * source's rows are staged in a temporary table, then each question ("which batch does this row
 * belong to", "who left", "who joined", "whose data changed") is one SQL statement over all rows
 * and batches of the runbook. A tick over 100,000 members is a few dozen statements, not 100,000.
 *
 * Every function here runs inside the caller's transaction: the staging table lives until commit.
 */
export interface StagedSourceRow {
  /** The row's primary key value, as text. */
  readonly memberKey: string;
  /** Batch start time from batch_time_column; null in immediate mode until it is assigned. */
  readonly batchStart: Date | null;
  /** What batch_members.data_json holds for the member (serializeMemberData). */
  readonly data: JsonObject;
  /** The existing batch the row belongs to, when the caller already knows it. */
  readonly batchId?: number | null;
}

const staged = sql.table("scheduler_source_rows");
/**
 * Rows per INSERT. Small enough that a chunk's text (about 1 MB) is garbage before the next
 * young-generation collection, so it never reaches the old generation and the process's peak
 * memory stays near its live data; large enough that 100,000 rows take 40 statements.
 */
const STAGE_CHUNK_ROWS = 2_500;
const inFlight = sql.join(inFlightBatchStates.map((state) => sql`${state}::text`));

/**
 * Creates the staging table and fills it from `rows`, chunk by chunk, pulling the next rows
 * only once the previous chunk is in PostgreSQL: a (possibly async) generator that streams the
 * source's rows keeps one chunk in memory, never the whole result. An error the iterator throws
 * (a bad row, a source failing mid-stream) rolls the caller's transaction back. Returns the row
 * count.
 */
export async function stageSourceRows(
  trx: Db,
  rows: Iterable<StagedSourceRow> | AsyncIterable<StagedSourceRow>,
): Promise<number> {
  if (!trx.isTransaction) throw new Error("stageSourceRows must run inside a transaction");
  // The diff's joins hash the whole staged set (100,000 rows of member data): with the default
  // 4 MB they spill to temporary files and time grows faster than the row count.
  await sql`SET LOCAL work_mem = '64MB'`.execute(trx);
  await sql`
    CREATE TEMPORARY TABLE scheduler_source_rows (
      member_key text NOT NULL,
      batch_start timestamptz,
      data_json jsonb NOT NULL,
      batch_id integer
    ) ON COMMIT DROP
  `.execute(trx);
  let count = 0;
  let chunkRows = 0;
  let document = "";
  const flush = async () => {
    if (chunkRows === 0) return;
    // One JSON document per chunk: serialised once here, parsed once by PostgreSQL.
    const text = `[${document}]`;
    document = "";
    chunkRows = 0;
    await sql`
      INSERT INTO ${staged} (member_key, batch_start, data_json, batch_id)
      SELECT k, t, d, b FROM jsonb_to_recordset(${text}::jsonb) AS x(k text, t timestamptz, d jsonb, b integer)
    `.execute(trx);
  };
  for await (const row of rows) {
    const json = JSON.stringify({
      k: row.memberKey,
      t: row.batchStart?.toISOString() ?? null,
      d: row.data,
      b: row.batchId ?? null,
    });
    document = chunkRows === 0 ? json : `${document},${json}`;
    chunkRows += 1;
    count += 1;
    if (chunkRows >= STAGE_CHUNK_ROWS) await flush();
  }
  await flush();
  // Every diff statement looks rows up by key; the index keeps a nested loop (chosen when
  // batch_members' statistics lag behind a batch just created) a loop of index probes.
  await sql`CREATE INDEX ON ${staged} (member_key)`.execute(trx);
  return count;
}

/**
 * Immediate mode (000: "members already in an active batch for the same runbook are filtered
 * out"): a row whose key is a member (active, or failed: a failed member is not re-batched every
 * tick) of an in-flight automated batch belongs to that batch; a row whose key is in an in-flight
 * manual batch is dropped (the scheduler never syncs manual batches). Returns how many rows were
 * dropped.
 */
export async function assignStagedRowsByMembership(trx: Db, runbookName: string): Promise<number> {
  await sql`
    UPDATE ${staged} AS s SET batch_id = m.batch_id
    FROM batch_members m
    JOIN batches b ON b.id = m.batch_id
    JOIN runbooks r ON r.id = b.runbook_id
    WHERE s.member_key = m.member_key AND m.status <> 'removed'
      AND r.name = ${runbookName} AND NOT b.is_manual AND b.status IN (${inFlight})
  `.execute(trx);
  const dropped = await sql`
    DELETE FROM ${staged} AS s
    USING batch_members m
    JOIN batches b ON b.id = m.batch_id
    JOIN runbooks r ON r.id = b.runbook_id
    WHERE s.batch_id IS NULL AND s.member_key = m.member_key AND m.status <> 'removed'
      AND r.name = ${runbookName} AND b.is_manual AND b.status IN (${inFlight})
  `.execute(trx);
  return Number(dropped.numAffectedRows ?? 0n);
}

/**
 * Immediate mode: rows in no batch start at `start` (now, rounded to 5 minutes) and join
 * `batchId`, the in-flight batch of that start time if a tick in the same window created one.
 */
export async function assignUnassignedRows(trx: Db, start: Date, batchId: number | null): Promise<void> {
  await sql`UPDATE ${staged} SET batch_start = ${start}, batch_id = ${batchId} WHERE batch_id IS NULL`.execute(
    trx,
  );
}

export interface NewBatchGroup {
  readonly batchStart: Date;
  readonly memberCount: number;
}

/** Start times of rows that belong to no batch yet: the batches a tick would create. */
export async function listUnassignedGroups(trx: Db): Promise<NewBatchGroup[]> {
  const result = await sql<{ batch_start: Date; member_count: number }>`
    SELECT batch_start, count(*)::int AS member_count FROM ${staged}
    WHERE batch_id IS NULL GROUP BY batch_start ORDER BY batch_start
  `.execute(trx);
  return result.rows.map((row) => ({ batchStart: row.batch_start, memberCount: row.member_count }));
}

/** Which staged rows fall into which existing batch (preview: "would sync into batch N"). */
export async function countStagedRowsByBatch(trx: Db): Promise<Map<number, number>> {
  const result = await sql<{ batch_id: number; member_count: number }>`
    SELECT batch_id, count(*)::int AS member_count FROM ${staged}
    WHERE batch_id IS NOT NULL GROUP BY batch_id
  `.execute(trx);
  return new Map(result.rows.map((row) => [row.batch_id, row.member_count]));
}

/** A new batch's members: the unassigned rows of its start time (no member-added: it is new). */
export async function insertMembersOfNewBatch(trx: Db, batchId: number, batchStart: Date): Promise<number> {
  const result = await sql`
    INSERT INTO batch_members (batch_id, member_key, data_json)
    SELECT ${batchId}, member_key, data_json FROM ${staged}
    WHERE batch_id IS NULL AND batch_start = ${batchStart}
  `.execute(trx);
  return Number(result.numAffectedRows ?? 0n);
}

const batchIdsArray = (batchIds: readonly number[]) => sql`${[...batchIds]}::int[]`;

/**
 * Active members of `batchIds` whose key has no row for their batch any more become `removed`
 * (removed_at, and remove_dispatched_at: the caller queues member-removed in this transaction).
 */
export async function removeMembersMissingFromSource(
  trx: Db,
  batchIds: readonly number[],
  now: Date,
): Promise<BatchMember[]> {
  if (batchIds.length === 0) return [];
  return applyTransition<BatchMember>(
    trx,
    {
      table: "batch_members",
      entity: "member",
      batchIdColumn: "batch_id",
      from: ["active"],
      to: "removed",
      set: { removed_at: now, remove_dispatched_at: now },
      reason: "no longer in the data source results",
    },
    sql`batch_id = ANY(${batchIdsArray(batchIds)}) AND NOT EXISTS (
      SELECT 1 FROM ${staged} s
      WHERE s.batch_id = batch_members.batch_id AND s.member_key = batch_members.member_key
    )`,
  );
}

export type AddedMember = Pick<BatchMember, "id" | "batchId" | "memberKey">;

/**
 * Rows of `batchIds` whose key is not yet a member (or only a removed one: a key may come back)
 * join as active members with add_dispatched_at set: the caller queues member-added in this
 * transaction. A failed member stays failed; its row does not bring it back.
 */
export async function insertMembersNewToBatches(
  trx: Db,
  batchIds: readonly number[],
  now: Date,
): Promise<AddedMember[]> {
  if (batchIds.length === 0) return [];
  const result = await sql<{ id: number; batch_id: number; member_key: string }>`
    INSERT INTO batch_members (batch_id, member_key, data_json, add_dispatched_at)
    SELECT s.batch_id, s.member_key, s.data_json, ${now}::timestamptz FROM ${staged} s
    WHERE s.batch_id = ANY(${batchIdsArray(batchIds)}) AND NOT EXISTS (
      SELECT 1 FROM batch_members m
      WHERE m.batch_id = s.batch_id AND m.member_key = s.member_key AND m.status <> 'removed'
    )
    ON CONFLICT DO NOTHING
    RETURNING id, batch_id, member_key
  `.execute(trx);
  return result.rows.map((row) => ({ id: row.id, batchId: row.batch_id, memberKey: row.member_key }));
}

/**
 * 000: data_json is refreshed for active members still present, so later phases resolve their
 * templates with current values. Only changed rows are written. Returns how many changed.
 */
export async function refreshMemberData(trx: Db, batchIds: readonly number[]): Promise<number> {
  if (batchIds.length === 0) return 0;
  const result = await sql`
    UPDATE batch_members AS m SET data_json = s.data_json
    FROM ${staged} s
    WHERE m.batch_id = ANY(${batchIdsArray(batchIds)}) AND m.status = 'active'
      AND s.batch_id = m.batch_id AND s.member_key = m.member_key
      AND m.data_json IS DISTINCT FROM s.data_json
  `.execute(trx);
  return Number(result.numAffectedRows ?? 0n);
}

import { sql, type RawBuilder } from "kysely";
import { inFlightBatchStates } from "./automated-batches.repository.ts";
import type { Db } from "./connection.ts";
import type { BatchMember } from "./members.table.ts";
import { applyTransition } from "./transition.ts";

/**
 * Set-based member synchronisation (000 "Member Synchronization", MemberDiffService): the data
 * source's rows are streamed into a temporary table a chunk at a time, and each question ("which
 * batch does this row belong to", "who joined", "whose data changed", "who left") is one SQL
 * statement over a chunk or over every row, never one per row. A tick over 1,000,000 members is a
 * few hundred statements, and the process holds two chunks of rows, never the result.
 *
 * Where the rows' batches are known as they arrive (batch_time_column), each chunk's statement
 * also does that chunk's share of the diff (joiners, data refresh, members of batches created in
 * this tick): PostgreSQL works on one chunk while the scheduler reads and checks the next, so a
 * large source costs about the longer of the two, not their sum. Leavers need every row, so they
 * are found once the last chunk is in.
 *
 * Every function here runs inside the caller's transaction: the temporary tables live until
 * commit.
 */
export interface StagedSourceRow {
  /** The row's primary key value, as text. */
  readonly memberKey: string;
  /** Batch start time from batch_time_column; null in immediate mode until it is assigned. */
  readonly batchStart: Date | null;
  /**
   * batch_members.data_json for the member, as JSON text on one line (JSON.stringify never
   * writes a line break). Written as jsonb renders it where possible: an unchanged member is then
   * recognised by comparing text, without parsing.
   */
  readonly dataJson: string;
}

const staged = sql.table("scheduler_source_rows");
const joinedMembers = sql.table("scheduler_joined_members");
/**
 * Rows per statement: a chunk's text (about 4 MB at 400 bytes a row) is garbage soon after it is
 * sent, and a million rows take 100 statements, so planning them (a few ms each) costs little.
 */
const STAGE_CHUNK_ROWS = 10_000;
/** Members per member-removed / member-added page: one transition and one outbox insert each. */
const MESSAGE_PAGE = 1_000;
const inFlight = sql.join(inFlightBatchStates.map((state) => sql`${state}::text`));

/** Diffing each chunk as it is written: rows of `batchIds` against those batches' members. */
export interface ChunkSync {
  /** In-flight automated batches whose members follow the source. */
  readonly batchIds: readonly number[];
  /** add_dispatched_at of joiners. */
  readonly now: Date;
}

/** What staging wrote besides the staged rows themselves. */
export interface StagingResult {
  readonly rows: number;
  /** Members whose data_json changed (chunk sync only). */
  readonly membersRefreshed: number;
  /** Members who joined a batch in flight (chunk sync only); queueJoinedMembers reports them. */
  readonly membersJoined: number;
}

/** Appends source rows to the staging table, in result order (row numbers count from 1). */
export interface SourceRowStager {
  /**
   * Buffers `row`, with the existing batch it belongs to when the caller knows it (null: none
   * yet, or assigned later in SQL). Once a chunk is full it is sent, and the promise returned
   * (only then) settles when the previous chunk has been written: at most one chunk is in
   * PostgreSQL while the next is being read and checked, so memory holds two chunks whatever
   * the result size.
   */
  add(row: StagedSourceRow, batchId: number | null): Promise<void> | undefined;
  /** A batch created in this tick: its rows, from the next chunk sent on, become its members. */
  addNewBatch(batchId: number): void;
  /** The key of an earlier row (1-based), whether still buffered or already written. */
  keyOfRow(rowNumber: number): Promise<string | undefined>;
  /** Writes what is buffered and waits for every chunk. */
  finish(): Promise<StagingResult>;
}

/**
 * Creates the staging tables in the caller's transaction. With `sync`, each chunk is diffed as
 * it is written (see the module comment); without, the caller diffs after assigning batches
 * (`syncStagedMembers`). An error writing a chunk surfaces from the next `add` or `finish`; an
 * error of the caller (a bad row, a source failing mid-stream) rolls the transaction back with
 * whatever was staged.
 */
export async function startStaging(trx: Db, sync?: ChunkSync): Promise<SourceRowStager> {
  if (!trx.isTransaction) throw new Error("startStaging must run inside a transaction");
  // The leaver diff's hash join holds the staged keys of every row (a million at 40 bytes each):
  // with the default 4 MB it spills to temporary files and time grows faster than the row count.
  await sql`SET LOCAL work_mem = '128MB'`.execute(trx);
  // data_json is the JSON text, kept only for rows not yet in a batch (their members are written
  // later, in SQL); it is parsed to jsonb only for members written (new, joined, changed).
  await sql`
    CREATE TEMPORARY TABLE scheduler_source_rows (
      row_number integer NOT NULL,
      member_key text NOT NULL,
      batch_start timestamptz,
      batch_id integer,
      data_json text
    ) ON COMMIT DROP
  `.execute(trx);
  await sql`CREATE TEMPORARY TABLE scheduler_joined_members (id integer NOT NULL) ON COMMIT DROP`.execute(
    trx,
  );
  return new ChunkedStager(trx, sync);
}

class ChunkedStager implements SourceRowStager {
  /**
   * Two sets of buffers, alternating: one is being filled while the other's chunk is in
   * PostgreSQL. Rows are written into them as UTF-8 as they come, so a row's text is garbage at
   * once instead of living in the heap until its chunk is sent (a chunk's worth of strings
   * outlives V8's young generation and would pile up in the old one: a million rows of it).
   */
  private readonly buffers = [
    { keys: new TextBuffer(), data: new TextBuffer() },
    { keys: new TextBuffer(), data: new TextBuffer() },
  ];
  private filling = 0;
  private starts: (string | null)[] = [];
  private batchIds: (number | null)[] = [];
  private readonly newBatchIds: number[] = [];
  /** Rows sent so far: the row number of the first buffered row minus one. */
  private sent = 0;
  private membersRefreshed = 0;
  private membersJoined = 0;
  private inFlight: Promise<unknown> = Promise.resolve();
  private lastStart = { ms: Number.NaN, iso: "" };

  constructor(
    private readonly trx: Db,
    private readonly sync: ChunkSync | undefined,
  ) {}

  add(row: StagedSourceRow, batchId: number | null): Promise<void> | undefined {
    if (row.dataJson.includes("\n")) {
      // Rows travel as lines: one inside a row would shift every later row onto another key.
      throw new Error("staged data_json must be JSON text on one line");
    }
    const { keys, data } = this.buffers[this.filling] as ChunkBuffers;
    const first = this.batchIds.length === 0;
    keys.append(first ? "[" : ",");
    keys.append(JSON.stringify(row.memberKey));
    if (!first) data.append("\n");
    data.append(row.dataJson);
    // The start time matters only to rows without a batch (grouped into new ones): the others
    // send null, which PostgreSQL does not parse.
    this.starts.push(batchId === null ? this.isoOf(row.batchStart) : null);
    this.batchIds.push(batchId);
    return this.batchIds.length >= STAGE_CHUNK_ROWS ? this.send() : undefined;
  }

  addNewBatch(batchId: number): void {
    this.newBatchIds.push(batchId);
  }

  async keyOfRow(rowNumber: number): Promise<string | undefined> {
    // Only for a repeated fingerprint (a repeated key, almost always): the rows buffered so far
    // are written first, and the key read back.
    if (rowNumber > this.sent) await this.send();
    await this.inFlight;
    const result = await sql<{ member_key: string }>`
      SELECT member_key FROM ${staged} WHERE row_number = ${rowNumber}
    `.execute(this.trx);
    return result.rows[0]?.member_key;
  }

  async finish(): Promise<StagingResult> {
    await this.send();
    await this.inFlight;
    return { rows: this.sent, membersRefreshed: this.membersRefreshed, membersJoined: this.membersJoined };
  }

  private async send(): Promise<void> {
    const rows = this.batchIds.length;
    if (rows === 0) return;
    const { keys, data } = this.buffers[this.filling] as ChunkBuffers;
    keys.append("]");
    // Four parameters whatever the row count, the keys and data as UTF-8 bytes (node-postgres
    // sends a Buffer as is): JSON arrays, and the data as lines, the bulk of it, split by
    // PostgreSQL without parsing. ROWS FROM zips them row by row.
    const input = sql`
      SELECT ${this.sent}::int + x.n AS row_number, x.k AS member_key, x.t::timestamptz AS batch_start,
        x.b::int AS batch_id, x.d AS data_json
      FROM ROWS FROM (
        json_array_elements_text(${keys.bytes()}::json),
        unnest(string_to_array(${data.bytes()}::text, E'\\n')),
        json_array_elements_text(${JSON.stringify(this.starts)}::json),
        json_array_elements_text(${JSON.stringify(this.batchIds)}::json)
      ) WITH ORDINALITY AS x(k, d, t, b, n)
    `;
    const newBatchIds = [...this.newBatchIds];
    this.starts = [];
    this.batchIds = [];
    this.sent += rows;
    await this.inFlight;
    // The other buffers' chunk is written: they take the next rows.
    this.filling = 1 - this.filling;
    (this.buffers[this.filling] as ChunkBuffers).keys.clear();
    (this.buffers[this.filling] as ChunkBuffers).data.clear();
    // Only the parts this tick needs: each costs planning, chunk after chunk.
    const parts = [
      sql`input AS MATERIALIZED (${input})`,
      sql`kept AS (
        INSERT INTO ${staged} (row_number, member_key, batch_start, batch_id, data_json)
        SELECT row_number, member_key, batch_start, batch_id,
          CASE WHEN batch_id IS NULL THEN data_json END
        FROM input
      )`,
    ];
    if (newBatchIds.length > 0) {
      parts.push(sql`created AS (
        INSERT INTO batch_members (batch_id, member_key, data_json)
        SELECT batch_id, member_key, data_json::jsonb FROM input WHERE batch_id = ANY(${newBatchIds}::int[])
      )`);
    }
    const diff = this.sync === undefined ? undefined : memberDiff(sql`input`, this.sync);
    const written = sql<{ refreshed: number; joined: number }>`
      WITH ${sql.join(diff === undefined ? parts : [...parts, ...diff.parts])}
      ${diff?.select ?? sql`SELECT 0 AS refreshed, 0 AS joined`}
    `
      .execute(this.trx)
      .then((result) => {
        this.membersRefreshed += result.rows[0]?.refreshed ?? 0;
        this.membersJoined += result.rows[0]?.joined ?? 0;
      });
    // Awaited by the next send or finish; marked handled now so that a failure while the caller
    // is busy elsewhere is not an unhandled rejection.
    written.catch(() => undefined);
    this.inFlight = written;
  }

  private isoOf(start: Date | null): string | null {
    if (start === null) return null;
    const ms = start.getTime();
    if (ms !== this.lastStart.ms) this.lastStart = { ms, iso: start.toISOString() };
    return this.lastStart.iso;
  }
}

interface ChunkBuffers {
  readonly keys: TextBuffer;
  readonly data: TextBuffer;
}

/**
 * UTF-8 text appended into one growing buffer, reused chunk after chunk. Appended strings are
 * gathered a few hundred at a time and written in one go: writing each one crosses into native
 * code, a cost a million rows notice.
 */
class TextBuffer {
  private buffer = Buffer.allocUnsafe(1 << 20);
  private length = 0;
  private pending: string[] = [];

  append(text: string): void {
    if (this.pending.push(text) >= 512) this.write();
  }

  /** The text so far; valid until the next clear. */
  bytes(): Buffer {
    this.write();
    return this.buffer.subarray(0, this.length);
  }

  clear(): void {
    this.pending = [];
    this.length = 0;
  }

  private write(): void {
    if (this.pending.length === 0) return;
    const text = this.pending.join("");
    this.pending = [];
    // At most 3 bytes per UTF-16 unit.
    if (this.length + text.length * 3 > this.buffer.length) {
      const larger = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.length + text.length * 3));
      this.buffer.copy(larger, 0, 0, this.length);
      this.buffer = larger;
    }
    this.length += this.buffer.write(text, this.length, "utf8");
  }
}

/**
 * The diff of `rows` (row_number, batch_id, member_key, data_json) against the members of
 * `sync.batchIds`, as CTEs and the statement's closing SELECT of (refreshed, joined); undefined
 * when there is no batch to diff:
 * - 000: data_json is refreshed for active members still present, so later phases resolve their
 *   templates with current values. Only changed rows are written: the staged text is first
 *   compared with the stored value's text (cheap, and equal for an unchanged member), and only
 *   where they differ parsed and compared as jsonb, so a rendering difference alone never
 *   rewrites a member.
 * - A row whose key is not a member (or only a removed one: a key may come back) joins as an
 *   active member with add_dispatched_at set; its id is noted for queueJoinedMembers, which
 *   queues member-added in this transaction. A failed member stays failed; its row does not
 *   bring it back.
 */
function memberDiff(
  rows: RawBuilder<unknown>,
  sync: ChunkSync,
): { parts: RawBuilder<unknown>[]; select: RawBuilder<unknown> } | undefined {
  if (sync.batchIds.length === 0) return undefined;
  return {
    parts: [
      sql`diff AS (
        SELECT r.batch_id, r.member_key, r.data_json, m.id AS member_id,
          CASE WHEN m.data_json::text = r.data_json THEN false ELSE m.data_json <> r.data_json::jsonb END
            AS changed
        FROM ${rows} r
        LEFT JOIN batch_members m
          ON m.batch_id = r.batch_id AND m.member_key = r.member_key AND m.status <> 'removed'
        WHERE r.batch_id = ANY(${[...sync.batchIds]}::int[])
      )`,
      sql`refreshed AS (
        UPDATE batch_members AS m SET data_json = d.data_json::jsonb
        FROM diff d
        WHERE d.changed AND m.id = d.member_id AND m.status = 'active'
        RETURNING m.id
      )`,
      sql`joined AS (
        INSERT INTO batch_members (batch_id, member_key, data_json, add_dispatched_at)
        SELECT batch_id, member_key, data_json::jsonb, ${sync.now}::timestamptz
        FROM diff WHERE member_id IS NULL
        ON CONFLICT DO NOTHING
        RETURNING id
      )`,
      sql`noted AS (INSERT INTO ${joinedMembers} (id) SELECT id FROM joined)`,
    ],
    select: sql`SELECT (SELECT count(*)::int FROM refreshed) AS refreshed, (SELECT count(*)::int FROM joined) AS joined`,
  };
}

/**
 * Immediate mode, once the rows' batches are assigned: the diff each chunk would have made
 * (joiners, data refresh), over every staged row of `batchIds` in one statement.
 */
export async function syncStagedMembers(
  trx: Db,
  sync: ChunkSync,
): Promise<{ membersRefreshed: number; membersJoined: number }> {
  const diff = memberDiff(sql`${staged}`, sync);
  if (diff === undefined) return { membersRefreshed: 0, membersJoined: 0 };
  const result = await sql<{ refreshed: number; joined: number }>`
    WITH ${sql.join(diff.parts)} ${diff.select}
  `.execute(trx);
  return { membersRefreshed: result.rows[0]?.refreshed ?? 0, membersJoined: result.rows[0]?.joined ?? 0 };
}

/**
 * After the last chunk: statistics for the plans of the statements over every staged row
 * (temporary tables are never analysed automatically, and a plan guessing a handful of rows
 * would loop over a million).
 */
export async function analyzeStagedRows(trx: Db): Promise<void> {
  await sql`ANALYZE ${staged}`.execute(trx);
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

/**
 * New batches' members: the unassigned rows of each batch's start time, every batch in one
 * statement (one pass over the staged rows). No member-added: the batches are new.
 */
export async function insertMembersOfNewBatches(
  trx: Db,
  batches: readonly { readonly batchId: number; readonly batchStart: Date }[],
): Promise<number> {
  if (batches.length === 0) return 0;
  const result = await sql`
    INSERT INTO batch_members (batch_id, member_key, data_json)
    SELECT g.batch_id, s.member_key, s.data_json::jsonb
    FROM ${staged} s
    JOIN unnest(
      ${batches.map((batch) => batch.batchId)}::int[],
      ${batches.map((batch) => batch.batchStart)}::timestamptz[]
    ) AS g(batch_id, batch_start) ON g.batch_start = s.batch_start
    WHERE s.batch_id IS NULL
  `.execute(trx);
  return Number(result.numAffectedRows ?? 0n);
}

const batchIdsArray = (batchIds: readonly number[]) => sql`${[...batchIds]}::int[]`;

/**
 * Active members of `batchIds` whose key has no row for their batch any more become `removed`
 * (removed_at, and remove_dispatched_at: `onRemoved` queues member-removed in this transaction),
 * a page of members at a time, so that a source that comes back empty does not load every
 * member into memory. Returns how many were removed.
 */
export async function removeMembersMissingFromSource(
  trx: Db,
  batchIds: readonly number[],
  now: Date,
  onRemoved: (members: readonly BatchMember[]) => Promise<void>,
): Promise<number> {
  if (batchIds.length === 0) return 0;
  // One pass over each side, hashed, whatever the statistics say: batch_members' may still count
  // a batch created a tick ago as empty, and a nested loop over an unindexed million staged rows
  // per member would never end.
  await sql`SET LOCAL enable_nestloop = off`.execute(trx);
  const leavers = await sql<{ ids: number[] | null }>`
    SELECT array_agg(m.id ORDER BY m.id) AS ids FROM batch_members m
    WHERE m.batch_id = ANY(${batchIdsArray(batchIds)}) AND m.status = 'active' AND NOT EXISTS (
      SELECT 1 FROM ${staged} s WHERE s.batch_id = m.batch_id AND s.member_key = m.member_key
    )
  `.execute(trx);
  await sql`SET LOCAL enable_nestloop TO DEFAULT`.execute(trx);
  const ids = leavers.rows[0]?.ids ?? [];
  let removed = 0;
  for (let start = 0; start < ids.length; start += MESSAGE_PAGE) {
    const members = await applyTransition<BatchMember>(
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
      sql`id = ANY(${ids.slice(start, start + MESSAGE_PAGE)}::int[])`,
    );
    removed += members.length;
    await onRemoved(members);
  }
  return removed;
}

export type AddedMember = Pick<BatchMember, "id" | "batchId" | "memberKey">;

/**
 * The members who joined in this transaction's staging (chunk sync or syncStagedMembers), in id
 * order, a page at a time: `onAdded` queues their member-added.
 */
export async function queueJoinedMembers(
  trx: Db,
  onAdded: (members: readonly AddedMember[]) => Promise<void>,
): Promise<void> {
  const joined = await sql<{ ids: number[] | null }>`
    SELECT array_agg(id ORDER BY id) AS ids FROM ${joinedMembers}
  `.execute(trx);
  const ids = joined.rows[0]?.ids ?? [];
  for (let start = 0; start < ids.length; start += MESSAGE_PAGE) {
    const page = await sql<{ id: number; batch_id: number; member_key: string }>`
      SELECT id, batch_id, member_key FROM batch_members
      WHERE id = ANY(${ids.slice(start, start + MESSAGE_PAGE)}::int[]) ORDER BY id
    `.execute(trx);
    await onAdded(page.rows.map((row) => ({ id: row.id, batchId: row.batch_id, memberKey: row.member_key })));
  }
}

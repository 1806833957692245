import {
  analyzeStagedRows,
  assignStagedRowsByMembership,
  assignUnassignedRows,
  listAutomatedBatchStarts,
  startStaging,
  syncStagedMembers,
  type ChunkSync,
  type Db,
} from "@matoolkit/db";
import type { DataSourceConfig } from "@matoolkit/domain";
import { roundToFiveMinutes } from "./batch-time.ts";
import { KeyFingerprints } from "./key-fingerprints.ts";
import { createSourceRowReader, duplicateKeyError, type SourceRow } from "./source-rows.ts";
import { batchesByStartTime } from "./batch-for-start.ts";

export interface StageOptions {
  /** Diff the rows of these in-flight batches against their members (the tick; not a preview). */
  readonly sync?: ChunkSync;
  /**
   * Creates the batch for a start time no batch has yet (automation on): called when its first
   * row arrives, so that its members are written as their rows stream in. Without it such rows
   * stay unassigned: listUnassignedGroups reports them.
   */
  readonly createBatch?: (batchStart: Date) => Promise<number>;
}

export interface StagedRows {
  readonly count: number;
  /** Immediate mode: rows left out because the key is active in a manual batch of the runbook. */
  readonly rowsInManualBatches: number;
  readonly membersRefreshed: number;
  /** Joiners of in-flight batches; their member-added are queued by queueJoinedMembers. */
  readonly membersJoined: number;
  /** Batches createBatch made, in the order their first rows came. */
  readonly createdBatches: readonly { readonly batchId: number; readonly batchStart: Date }[];
  /**
   * Rows staged without a batch (in immediate mode, before membership assigns some): when 0,
   * no row is left for listUnassignedGroups and the caller skips it.
   */
  readonly unassignedRows: number;
}

/**
 * Stages the source's rows in the caller's transaction, each with the batch it belongs to
 * (000 "data_source"): in scheduled mode the batch with the row's start time; in immediate mode
 * the batch the key is already active in, otherwise the batch starting at now rounded to 5
 * minutes. Rows left without a batch form the new batches.
 *
 * `rows` is pulled as staging goes (a data source's stream): a result of any size is never held
 * whole, and a source failing mid-stream throws out of the caller's transaction. Each row is
 * validated as it arrives; the first bad one, or the first repeated key, stops the source. In
 * scheduled mode a row's batch is known on arrival, so the member diff (`options.sync`) and the
 * new batches' members are written chunk by chunk while the source is still being read.
 */
export async function stageRows(
  trx: Db,
  runbookName: string,
  source: DataSourceConfig,
  rows: Iterable<SourceRow> | AsyncIterable<SourceRow>,
  now: Date,
  options: StageOptions = {},
): Promise<StagedRows> {
  const existing = await listAutomatedBatchStarts(trx, runbookName);
  const immediate = source.batchTime === "immediate";
  const byStart = batchesByStartTime(existing, { inFlightOnly: false });
  const stager = await startStaging(trx, immediate ? undefined : options.sync);
  const read = createSourceRowReader(source);
  const keys = new KeyFingerprints();
  const createdBatches: { batchId: number; batchStart: Date }[] = [];
  let rowNumber = 0;
  let unassignedRows = 0;
  for await (const raw of rows) {
    const row = read(raw, rowNumber);
    rowNumber += 1;
    for (const earlier of keys.add(row.memberKey, rowNumber)) {
      if ((await stager.keyOfRow(earlier)) === row.memberKey) {
        throw duplicateKeyError(source.primaryKey, earlier, rowNumber);
      }
    }
    let batchId: number | null = null;
    if (row.batchStart !== null && !immediate) {
      const start = row.batchStart.getTime();
      batchId = byStart.get(start) ?? null;
      if (batchId === null && options.createBatch !== undefined) {
        batchId = await options.createBatch(row.batchStart);
        byStart.set(start, batchId);
        stager.addNewBatch(batchId);
        createdBatches.push({ batchId, batchStart: row.batchStart });
      }
    }
    if (batchId === null) unassignedRows += 1;
    const sending = stager.add(row, batchId);
    if (sending !== undefined) await sending;
  }
  const staged = await stager.finish();
  const result: StagedRows = {
    count: staged.rows,
    rowsInManualBatches: 0,
    membersRefreshed: staged.membersRefreshed,
    membersJoined: staged.membersJoined,
    createdBatches,
    unassignedRows,
  };
  if (!immediate) {
    await analyzeStagedRows(trx);
    return result;
  }
  const rowsInManualBatches = await assignStagedRowsByMembership(trx, runbookName);
  const start = roundToFiveMinutes(now);
  // Two ticks within one 5-minute window add newcomers to the batch the first one created.
  const sameWindow = batchesByStartTime(existing, { inFlightOnly: true }).get(start.getTime()) ?? null;
  await assignUnassignedRows(trx, start, sameWindow);
  await analyzeStagedRows(trx);
  const synced =
    options.sync === undefined
      ? { membersRefreshed: 0, membersJoined: 0 }
      : await syncStagedMembers(trx, options.sync);
  return { ...result, ...synced, rowsInManualBatches };
}

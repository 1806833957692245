import {
  assignStagedRowsByMembership,
  assignUnassignedRows,
  listAutomatedBatchStarts,
  stageSourceRows,
  type Db,
  type StagedSourceRow,
} from "@matoolkit/db";
import type { DataSourceConfig } from "@matoolkit/domain";
import { roundToFiveMinutes } from "../source/batch-time.ts";
import { createSourceRowReader, type SourceRow } from "../source/source-rows.ts";
import { batchesByStartTime } from "./batch-for-start.ts";

export interface StagedRows {
  readonly count: number;
  /** Immediate mode: rows left out because the key is active in a manual batch of the runbook. */
  readonly rowsInManualBatches: number;
}

/**
 * Stages the source's rows in the caller's transaction, each with the batch it belongs to
 * (000 "data_source"): in scheduled mode the batch with the row's start time; in immediate mode
 * the batch the key is already active in, otherwise the batch starting at now rounded to 5
 * minutes. Rows left without a batch form the new batches.
 *
 * `rows` is pulled as staging goes (a data source's stream): a 100,000-row result is never held
 * whole, and a source failing mid-stream throws out of the caller's transaction.
 */
export async function stageRows(
  trx: Db,
  runbookName: string,
  source: DataSourceConfig,
  rows: Iterable<SourceRow> | AsyncIterable<SourceRow>,
  now: Date,
): Promise<StagedRows> {
  const existing = await listAutomatedBatchStarts(trx, runbookName);
  const immediate = source.batchTime === "immediate";
  const byStart = batchesByStartTime(existing, { inFlightOnly: false });
  const count = await stageSourceRows(
    trx,
    readEach(rows, createSourceRowReader(source), immediate ? undefined : byStart),
  );
  if (!immediate) return { count, rowsInManualBatches: 0 };
  const rowsInManualBatches = await assignStagedRowsByMembership(trx, runbookName);
  const start = roundToFiveMinutes(now);
  // Two ticks within one 5-minute window add newcomers to the batch the first one created.
  const sameWindow = batchesByStartTime(existing, { inFlightOnly: true }).get(start.getTime()) ?? null;
  await assignUnassignedRows(trx, start, sameWindow);
  return { count, rowsInManualBatches };
}

async function* readEach(
  rows: Iterable<SourceRow> | AsyncIterable<SourceRow>,
  read: (row: SourceRow, index: number) => StagedSourceRow,
  byStart: Map<number, number> | undefined,
): AsyncGenerator<StagedSourceRow> {
  let index = 0;
  for await (const row of rows) {
    const staged = read(row, index++);
    const batchId = staged.batchStart === null ? null : (byStart?.get(staged.batchStart.getTime()) ?? null);
    yield { ...staged, batchId };
  }
}

import type { StagedSourceRow } from "@matoolkit/db";
import { serializeMemberData, type DataSourceConfig } from "@matoolkit/domain";
import { parseBatchTime } from "./batch-time.ts";
import { createMemberDataWriter } from "./member-data-json.ts";
import { SourceRowError } from "./source-row-error.ts";

export { SourceRowError } from "./source-row-error.ts";

/** Rows as a data source client returns them: column name → driver value. */
export type SourceRow = Readonly<Record<string, unknown>>;

/**
 * Validates source rows one at a time, in result order: text PostgreSQL can store, a non-empty
 * primary key, a readable batch time in scheduled mode, and member data serialised with
 * multi_valued_columns (as JSON text, `member-data-json.ts`). The first bad row throws; the
 * scheduler stages rows inside the sync transaction, so one bad row rolls the whole tick of the
 * runbook back (nothing half-applied).
 *
 * A key repeated in a later row is not looked for here: the tick's staging table finds it
 * (remembering a million keys here would cost more memory than the rest of the tick).
 */
export function createSourceRowReader(
  source: DataSourceConfig,
): (row: SourceRow, index: number) => StagedSourceRow {
  const data = createMemberDataWriter(source.multiValuedColumns);
  return (row, index) => {
    const rowNumber = index + 1;
    const dataJson = data.write(row, rowNumber);
    const memberKey = primaryKeyOf(row, source.primaryKey, rowNumber);
    const batchStart =
      source.batchTimeColumn === undefined ? null : batchTimeOf(row, source.batchTimeColumn, rowNumber);
    if (data.conversionError !== undefined) throw data.conversionError;
    return { memberKey, batchStart, dataJson };
  };
}

/** A validated row with its member data as an object (what the query preview shows). */
export interface SourceRowPreview {
  readonly memberKey: string;
  readonly batchStart: Date | null;
  readonly data: Record<string, unknown>;
}

/**
 * Every row at once (the query preview's few hundred), with the checks a tick makes, repeated
 * keys included, and the data in the source's column order.
 */
export function toSourceRows(rows: readonly SourceRow[], source: DataSourceConfig): SourceRowPreview[] {
  const read = createSourceRowReader(source);
  const firstRowOfKey = new Map<string, number>();
  return rows.map((row, index) => {
    const { memberKey, batchStart } = read(row, index);
    const earlier = firstRowOfKey.get(memberKey);
    if (earlier !== undefined) throw duplicateKeyError(source.primaryKey, earlier, index + 1);
    firstRowOfKey.set(memberKey, index + 1);
    return { memberKey, batchStart, data: serializeMemberData(row, source.multiValuedColumns) };
  });
}

/** Two rows with one key: named by row numbers and column, never by the value (member data). */
export function duplicateKeyError(primaryKey: string, firstRow: number, secondRow: number): SourceRowError {
  return new SourceRowError(
    `rows ${firstRow} and ${secondRow} have the same value in primary key column "${primaryKey}"`,
  );
}

/** Member keys are indexed; PostgreSQL refuses an index entry over ~2.7 kB (4 bytes × 512 fits). */
const maxMemberKeyLength = 512;

function primaryKeyOf(row: SourceRow, column: string, rowNumber: number): string {
  const value = row[column];
  if (value === null || value === undefined || (typeof value === "string" && value.trim() === "")) {
    throw new SourceRowError(`row ${rowNumber}: primary key column "${column}" is empty or missing`);
  }
  if (typeof value === "string") {
    if (value.length > maxMemberKeyLength) {
      throw new SourceRowError(
        `row ${rowNumber}: primary key column "${column}" is longer than ${maxMemberKeyLength} characters`,
      );
    }
    return value;
  }
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  throw new SourceRowError(`row ${rowNumber}: primary key column "${column}" is not text or a number`);
}

function batchTimeOf(row: SourceRow, column: string, rowNumber: number): Date {
  const value = row[column];
  if (value === null || value === undefined || value === "") {
    throw new SourceRowError(
      `row ${rowNumber}: batch_time_column "${column}" is empty or missing (filter such rows out in the query)`,
    );
  }
  const instant = parseBatchTime(value);
  if (instant === undefined) {
    throw new SourceRowError(`row ${rowNumber}: batch_time_column "${column}" is not an ISO 8601 date/time`);
  }
  return instant;
}

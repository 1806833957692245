import type { StagedSourceRow } from "@matoolkit/db";
import {
  MemberDataError,
  NonRetriableError,
  reasonCodes,
  serializeMemberData,
  type DataSourceConfig,
} from "@matoolkit/domain";
import { parseBatchTime } from "./batch-time.ts";

/** Rows as a data source client returns them: column name → driver value. */
export type SourceRow = Readonly<Record<string, unknown>>;

/**
 * A source row the scheduler cannot use. The message names the row number (1-based, in result
 * order) and the column, never the value: it lands in runbooks.last_error and the API, and the
 * value may be a member's email.
 */
export class SourceRowError extends NonRetriableError {
  constructor(message: string) {
    super(reasonCodes.memberDataInvalid, message);
  }
}

/**
 * Validates source rows one at a time, in result order: a non-empty primary key not seen in an
 * earlier row, a readable batch time in scheduled mode, and member data serialised with
 * multi_valued_columns. The first bad row throws; the scheduler stages rows inside the sync
 * transaction, so one bad row rolls the whole tick of the runbook back (nothing half-applied).
 */
export function createSourceRowReader(
  source: DataSourceConfig,
): (row: SourceRow, index: number) => StagedSourceRow {
  const firstRowOfKey = new Map<string, number>();
  return (row, index) => {
    const rowNumber = index + 1;
    rejectUnstorableText(row, rowNumber);
    const memberKey = primaryKeyOf(row, source.primaryKey, rowNumber);
    const earlier = firstRowOfKey.get(memberKey);
    if (earlier !== undefined) {
      throw new SourceRowError(
        `rows ${earlier} and ${rowNumber} have the same value in primary key column "${source.primaryKey}"`,
      );
    }
    firstRowOfKey.set(memberKey, rowNumber);
    const batchStart =
      source.batchTimeColumn === undefined ? null : batchTimeOf(row, source.batchTimeColumn, rowNumber);
    return { memberKey, batchStart, data: memberDataOf(row, source, rowNumber) };
  };
}

/** Every row at once (the query preview's few hundred). */
export function toSourceRows(rows: readonly SourceRow[], source: DataSourceConfig): StagedSourceRow[] {
  return rows.map(createSourceRowReader(source));
}

// NUL, or a UTF-16 surrogate without its pair: PostgreSQL's text and jsonb refuse both, which
// would fail the tick's transaction with a driver error instead of naming the row.
const unstorable = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function hasUnstorableText(value: unknown, depth = 0): boolean {
  if (typeof value === "string") return unstorable.test(value);
  if (depth > 64 || typeof value !== "object" || value === null || value instanceof Date) return false;
  if (Array.isArray(value)) return value.some((item) => hasUnstorableText(item, depth + 1));
  return Object.entries(value).some(
    ([key, item]) => unstorable.test(key) || hasUnstorableText(item, depth + 1),
  );
}

function rejectUnstorableText(row: SourceRow, rowNumber: number): void {
  for (const [column, value] of Object.entries(row)) {
    if (unstorable.test(column)) {
      throw new SourceRowError(
        `row ${rowNumber}: a column name contains a NUL character or an unpaired surrogate`,
      );
    }
    if (hasUnstorableText(value)) {
      throw new SourceRowError(
        `row ${rowNumber}: column "${column}" contains a NUL character or an unpaired surrogate, which cannot be stored`,
      );
    }
  }
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

function memberDataOf(row: SourceRow, source: DataSourceConfig, rowNumber: number): Record<string, unknown> {
  try {
    return serializeMemberData(row, source.multiValuedColumns);
  } catch (error) {
    // MemberDataError names the column and format, never the cell.
    if (error instanceof MemberDataError) throw new SourceRowError(`row ${rowNumber}: ${error.message}`);
    throw error;
  }
}

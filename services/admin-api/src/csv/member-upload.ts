import type { DataSourceConfig } from "@matoolkit/domain";
import { ApiError } from "../http/api-error.ts";
import { tooManyRows } from "../http/limit-errors.ts";
import type { RowLimit } from "../http/request-limits.ts";
import type { CsvUpload } from "./csv-upload.ts";
import { membersFromRecords } from "./member-records.ts";
import { parseMembersCsv } from "./parse-members-csv.ts";
import { describeFlaw, jsonFlaw } from "./text-problems.ts";

/**
 * Members sent to an existing batch: the same CSV as batch creation, or JSON rows (one object per
 * member, column name → value, as a CSV row would give them). Either way the rows pass the same
 * checks before anything is written.
 */
export type MemberUpload =
  | { readonly format: "csv"; readonly upload: CsvUpload }
  | { readonly format: "json"; readonly rows: readonly Readonly<Record<string, unknown>>[] };

/** Where an uploaded member came from: its CSV line, or its path in the JSON body. */
export type UploadPosition = { readonly line: number } | { readonly path: string };

export interface PositionedMember {
  readonly memberKey: string;
  readonly data: Record<string, unknown>;
  readonly where: UploadPosition;
}

export function describePosition(where: UploadPosition): string {
  return "line" in where ? `line ${where.line}` : where.path.replace(/\.(\d+)$/, "[$1]");
}

export async function membersOfUpload(
  upload: MemberUpload,
  dataSource: DataSourceConfig,
  rowLimit: RowLimit,
): Promise<PositionedMember[]> {
  switch (upload.format) {
    case "csv":
      return (await parseMembersCsv(upload.upload, dataSource, { rowLimit })).map(
        ({ memberKey, data, line }) => ({ memberKey, data, where: { line } }),
      );
    case "json":
      if (upload.rows.length > rowLimit.max) throw tooManyRows(upload.rows.length, rowLimit);
      return membersOfJsonRows(upload.rows, dataSource);
    default: {
      const unreachable: never = upload;
      throw new Error(`unknown upload format ${String(unreachable)}`);
    }
  }
}

function membersOfJsonRows(
  rows: readonly Readonly<Record<string, unknown>>[],
  dataSource: DataSourceConfig,
): PositionedMember[] {
  if (rows.length === 0) {
    throw new ApiError(400, "member_data.invalid", "Invalid members: 'members' is empty", {
      problems: [{ path: "members", message: "at least one member is required" }],
    });
  }
  const flawed = jsonFlaw(rows, "members");
  if (flawed !== undefined) {
    const where = describePosition({ path: flawed.path });
    throw new ApiError(400, "member_data.invalid", `Invalid members: ${where} ${describeFlaw(flawed.flaw)}`, {
      problems: [{ path: flawed.path, message: describeFlaw(flawed.flaw) }],
    });
  }
  const { members, problems } = membersFromRecords<UploadPosition>(
    // Trimmed like CSV cells, so a key typed with a trailing space matches the same member.
    rows.map((record, index) => ({ record: trimmedStrings(record), where: { path: `members.${index}` } })),
    dataSource,
    describePosition,
  );
  if (problems.length > 0) {
    const summary = problems.map(({ where, message }) => `${describePosition(where)}: ${message}`).join("; ");
    throw new ApiError(400, "member_data.invalid", `Invalid members: ${summary}`, {
      problems: problems.map(({ where, message }) => ({ ...where, message })),
    });
  }
  return members;
}

function trimmedStrings(record: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const trimmed: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(record)) {
    // defineProperty: a column literally named "__proto__" stays data (as in serializeMemberData).
    Object.defineProperty(trimmed, name, {
      value: typeof value === "string" ? value.trim() : value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return trimmed;
}

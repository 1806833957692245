import { parse } from "csv-parse/sync";
import { MemberDataError, serializeMemberData, type DataSourceConfig } from "@matoolkit/domain";
import { ApiError } from "../http/api-error.ts";

export interface CsvMember {
  readonly memberKey: string;
  readonly data: Record<string, unknown>;
}

export interface CsvProblem {
  readonly line: number;
  readonly message: string;
}

/**
 * Members of a manual batch from a CSV upload: a header row, one member per row, keyed by the
 * runbook's primary_key column, multi_valued_columns split as the runbook says. Every problem is
 * reported (with its line) and nothing is written unless the whole file is valid. Problems name
 * lines and columns, never cell values (member PII).
 */
export function parseMembersCsv(text: string, dataSource: DataSourceConfig): CsvMember[] {
  let records: Array<{ record: Record<string, string>; info: { lines: number } }>;
  try {
    records = parse(text, {
      columns: (header: string[]) => header.map((name) => name.trim()),
      bom: true,
      skip_empty_lines: true,
      trim: true,
      info: true,
    });
  } catch (error) {
    const line = (error as { lines?: number }).lines;
    const code = (error as { code?: string }).code ?? "CSV_INVALID";
    throw invalid([{ line: line ?? 0, message: describeCsvError(code, (error as Error).message) }]);
  }
  if (records.length === 0) throw invalid([{ line: 1, message: "the CSV has a header but no member rows" }]);
  const header = Object.keys(records[0]?.record ?? {});
  if (!header.includes(dataSource.primaryKey)) {
    // The header is not listed back: when the header row was forgotten, the "column names" are
    // the first member's values (emails, names), which must not appear in an error.
    throw invalid([
      {
        line: 1,
        message: `missing primary key column '${dataSource.primaryKey}'; line 1 must be the header row naming the columns`,
      },
    ]);
  }
  const problems: CsvProblem[] = [];
  const seen = new Map<string, number>();
  const members: CsvMember[] = [];
  for (const { record, info } of records) {
    const key = record[dataSource.primaryKey] ?? "";
    if (key === "") {
      problems.push({ line: info.lines, message: `empty primary key '${dataSource.primaryKey}'` });
      continue;
    }
    const firstLine = seen.get(key);
    if (firstLine !== undefined) {
      problems.push({ line: info.lines, message: `duplicate primary key (same as line ${firstLine})` });
      continue;
    }
    seen.set(key, info.lines);
    try {
      members.push({ memberKey: key, data: serializeMemberData(record, dataSource.multiValuedColumns) });
    } catch (error) {
      if (!(error instanceof MemberDataError)) throw error;
      problems.push({ line: info.lines, message: error.message });
    }
  }
  if (problems.length > 0) throw invalid(problems);
  return members;
}

function invalid(problems: CsvProblem[]): ApiError {
  const summary = problems.map((problem) => `line ${problem.line}: ${problem.message}`).join("; ");
  return new ApiError(400, "member_data.invalid", `Invalid CSV: ${summary}`, { problems });
}

function describeCsvError(code: string, message: string): string {
  if (code === "CSV_RECORD_INCONSISTENT_FIELDS_LENGTH")
    return "row has a different number of fields than the header";
  if (code === "CSV_QUOTE_NOT_CLOSED") return "a quoted field is not closed";
  // csv-parse messages name positions, not values, except for a few that quote input; cut them.
  return message.split(":")[0] ?? "malformed CSV";
}

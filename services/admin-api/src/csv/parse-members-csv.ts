import { parse } from "csv-parse/sync";
import type { DataSourceConfig } from "@matoolkit/domain";
import { ApiError } from "../http/api-error.ts";
import { membersFromRecords } from "./member-records.ts";
import { describeFlaw, flawsByLine } from "./text-problems.ts";

export interface CsvMember {
  readonly memberKey: string;
  readonly data: Record<string, unknown>;
  /** The member's line in the file, for errors found later (a key already in the batch). */
  readonly line: number;
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
  const flaws = flawsByLine(text);
  if (flaws.length > 0) {
    throw invalid(
      flaws.map(({ line, column, flaw }) => ({ line, message: `column ${column} ${describeFlaw(flaw)}` })),
    );
  }
  let header: string[] = [];
  let records: Array<{ record: Record<string, string>; info: { lines: number } }>;
  try {
    records = parse(text, {
      columns: (names: string[]) => (header = names.map((name) => name.trim())),
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
  // Only once the header is known to be one (it names the key): then its names are columns, not PII.
  const repeated = repeatedColumns(header);
  if (repeated.length > 0) throw invalid(repeated);
  const { members, problems } = membersFromRecords(
    records.map(({ record, info }) => ({ record, where: info.lines })),
    dataSource,
    (line) => `line ${line}`,
  );
  if (problems.length > 0) throw invalid(problems.map(({ where, message }) => ({ line: where, message })));
  return members.map(({ memberKey, data, where }) => ({ memberKey, data, line: where }));
}

/** A repeated name would keep one of its two values silently. */
function repeatedColumns(header: readonly string[]): CsvProblem[] {
  const problems: CsvProblem[] = [];
  header.forEach((name, index) => {
    const first = header.indexOf(name);
    if (first !== index) {
      problems.push({
        line: 1,
        message: `column '${name}' appears twice in the header (fields ${first + 1} and ${index + 1})`,
      });
    }
  });
  return problems;
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

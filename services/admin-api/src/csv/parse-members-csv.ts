import { Readable } from "node:stream";
import { parse } from "csv-parse";
import type { DataSourceConfig } from "@matoolkit/domain";
import { ApiError } from "../http/api-error.ts";
import { tooManyRows } from "../http/limit-errors.ts";
import { formatCount, type RowLimit } from "../http/request-limits.ts";
import { createMemberChecker } from "./member-records.ts";
import type { CsvUpload } from "./csv-upload.ts";
import { describeFlaw, flawsByLineOfPieces } from "./text-problems.ts";
import { loopSlicer, type TimeSlicer } from "./time-slicer.ts";

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

export interface CsvReadOptions {
  /** More member rows than this are refused (member_data.too_many_rows), counted to the end. */
  readonly rowLimit: RowLimit;
  /** Default: the process's (time-slicer.ts loopSlicer). */
  readonly slicer?: TimeSlicer;
}

/** At most this many problems are listed: a wrong file of 100,000 rows is not answered in full. */
export const MAX_LISTED_PROBLEMS = 100;

/**
 * Members of a manual batch from a CSV upload: a header row, one member per row, keyed by the
 * runbook's primary_key column, multi_valued_columns split as the runbook says. Every problem is
 * reported (with its line, the first MAX_LISTED_PROBLEMS of them) and nothing is written unless
 * the whole file is valid. Problems name lines and columns, never cell values (member PII).
 */
export async function parseMembersCsv(
  upload: CsvUpload,
  dataSource: DataSourceConfig,
  options: CsvReadOptions,
): Promise<CsvMember[]> {
  const members: CsvMember[] = [];
  for await (const member of readMembersCsv(upload, dataSource, options)) members.push(member);
  return members;
}

/**
 * The same, as a stream: each valid member as it is read, so a caller that needs only some of
 * them (the plan lists 100) does not hold them all. The problems are thrown at the end (400),
 * after the last member: a caller must not act on the members before the iteration completed.
 * The upload is read twice, decoded 64 kB at a time (csv-upload.ts), never as one string: once
 * for text the database cannot store (text-problems.ts), then by csv-parse's streaming parser.
 * Both run in slices of about 10 ms, so the event loop keeps serving other requests meanwhile.
 */
export async function* readMembersCsv(
  upload: CsvUpload,
  dataSource: DataSourceConfig,
  options: CsvReadOptions,
): AsyncGenerator<CsvMember, void, undefined> {
  const slicer = options.slicer ?? loopSlicer;
  const flaws = await flawsByLineOfPieces(upload.texts(), () => slicer.pause());
  if (flaws.length > 0) {
    throw invalid(
      flaws.map(({ line, column, flaw }) => ({ line, message: `column ${column} ${describeFlaw(flaw)}` })),
    );
  }
  let header: string[] = [];
  // Small pieces and small items: what the parser has read ahead waits in its buffer while other
  // requests take their turns, and whatever waits through two minor GCs is copied to the old
  // generation (full-GC work later). A 16 kB piece is about 100 rows; each row keeps its line
  // number, not csv-parse's whole info object.
  const parser = Readable.from(upload.texts(PARSE_PIECE_BYTES)).pipe(
    parse({
      columns: (names: string[]) => (header = names.map((name) => name.trim())),
      bom: true,
      skip_empty_lines: true,
      trim: true,
      on_record: (record: Record<string, string>, { lines }: { lines: number }) => ({ record, line: lines }),
    }),
  );
  const checker = createMemberChecker<number>(dataSource, (line) => `line ${line}`);
  let rows = 0;
  try {
    for await (const { record, line } of parser as AsyncIterable<CsvRecord>) {
      rows += 1;
      if (rows === 1) refuseHeader(header, dataSource);
      // Past the limit, rows are only counted: the error says how many there were.
      if (rows <= options.rowLimit.max) {
        const member = checker.check(record, line);
        if (member !== undefined && checker.problems.length === 0) {
          yield { memberKey: member.memberKey, data: member.data, line: member.where };
        }
      }
      await slicer.pause();
    }
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw parseError(error);
  } finally {
    parser.destroy();
  }
  if (rows === 0) throw invalid([{ line: 1, message: "the CSV has a header but no member rows" }]);
  if (rows > options.rowLimit.max) throw tooManyRows(rows, options.rowLimit);
  const { problems } = checker;
  if (problems.length > 0) throw invalid(problems.map(({ where, message }) => ({ line: where, message })));
}

interface CsvRecord {
  readonly record: Record<string, string>;
  /** csv-parse's line count at the row's end: its last line (a quoted cell may span several). */
  readonly line: number;
}

const PARSE_PIECE_BYTES = 16 * 1024;

/** Checked once the header is read (csv-parse hands it over with the first row). */
function refuseHeader(header: readonly string[], dataSource: DataSourceConfig): void {
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
}

function parseError(error: unknown): ApiError {
  const line = (error as { lines?: number }).lines;
  const code = (error as { code?: string }).code ?? "CSV_INVALID";
  return invalid([{ line: line ?? 0, message: describeCsvError(code, (error as Error).message) }]);
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

function invalid(all: CsvProblem[]): ApiError {
  const problems = all.slice(0, MAX_LISTED_PROBLEMS);
  const more = all.length - problems.length;
  const summary =
    problems.map((problem) => `line ${problem.line}: ${problem.message}`).join("; ") +
    (more > 0
      ? `; and ${formatCount(more)} more problems (the first ${MAX_LISTED_PROBLEMS} are listed)`
      : "");
  return new ApiError(400, "member_data.invalid", `Invalid CSV: ${summary}`, { problems });
}

function describeCsvError(code: string, message: string): string {
  if (code === "CSV_RECORD_INCONSISTENT_FIELDS_LENGTH")
    return "row has a different number of fields than the header";
  if (code === "CSV_QUOTE_NOT_CLOSED") return "a quoted field is not closed";
  // csv-parse messages name positions, not values, except for a few that quote input; cut them.
  return message.split(":")[0] ?? "malformed CSV";
}

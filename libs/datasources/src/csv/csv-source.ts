import type { FileHandle } from "node:fs/promises";
import { parse } from "csv-parse";
import type { DataSourceConfig } from "@matoolkit/domain";
import { DataSourceError } from "../datasource-error.ts";
import { requireSetting } from "../environment.ts";
import { csvDisabled } from "../source-access.ts";
import { CsvPathRefused, openCsvBelow } from "./csv-path.ts";
import type { DataRow, SourceQuery } from "../types.ts";

/**
 * A CSV file as a data source, so the automated lifecycle runs on a laptop: a header row names
 * the columns, every value is a trimmed string. Streamed record by record: a large file is never
 * held in memory. Errors name the line and csv-parse's code, never cell values (member data).
 */
export async function* streamCsv(
  config: DataSourceConfig,
  csvDir: string | undefined,
  query: SourceQuery,
): AsyncGenerator<DataRow> {
  const path = requireSetting("csv", "path", config.path);
  if (csvDir === undefined) throw new DataSourceError("csv", csvDisabled, { retriable: false });
  let handle: FileHandle;
  try {
    // Checked on every read, not only at publish: a symlink or directory may change since.
    handle = await openCsvBelow(csvDir, path);
  } catch (error) {
    throw toDataSourceError(error, path);
  }
  const file = handle.createReadStream();
  const parser = parse({
    columns: uniqueColumns,
    bom: true,
    trim: true,
    skip_empty_lines: true,
    ...(query.limit === undefined ? {} : { to: query.limit }),
  });
  // pipe() does not forward the file's errors (ENOENT): the parser would wait forever.
  file.on("error", (error) => parser.destroy(error));
  file.pipe(parser);
  try {
    for await (const record of parser as AsyncIterable<Record<string, string>>) {
      if (query.signal.aborted) break;
      yield record;
    }
  } catch (error) {
    throw toDataSourceError(error, path);
  } finally {
    file.destroy();
    parser.destroy();
    await handle.close().catch(() => undefined);
  }
  if (query.signal.aborted) throw query.signal.reason as Error;
}

const csvProblems: Readonly<Record<string, string>> = {
  CSV_RECORD_INCONSISTENT_COLUMNS: "a row has a different number of fields than the header",
  CSV_RECORD_INCONSISTENT_FIELDS_LENGTH: "a row has a different number of fields than the header",
  CSV_QUOTE_NOT_CLOSED: "a quoted field is not closed",
  CSV_INVALID_CLOSING_QUOTE: "a quoted field has text after its closing quote",
  CSV_INVALID_OPENING_QUOTE: "a field has a quote inside unquoted text",
};

/** A repeated column name would silently keep one of the two values: refused, naming both positions. */
function uniqueColumns(header: string[]): string[] {
  const names = header.map((name) => name.trim());
  names.forEach((name, index) => {
    const first = names.indexOf(name);
    if (first !== index) throw new RepeatedColumn(name, first + 1, index + 1);
  });
  return names;
}

class RepeatedColumn extends Error {
  constructor(
    readonly column: string,
    readonly first: number,
    readonly second: number,
  ) {
    super("repeated column");
  }
}

function toDataSourceError(error: unknown, path: string): DataSourceError {
  if (error instanceof CsvPathRefused) {
    return new DataSourceError("csv", `csv path ${path} ${error.message}`, { retriable: false });
  }
  if (error instanceof RepeatedColumn) {
    // Header names are the runbook's columns, not member data.
    return new DataSourceError(
      "csv",
      `the header of ${path} repeats column "${error.column}" (fields ${error.first} and ${error.second})`,
      { retriable: false },
    );
  }
  const { code, lines } = error as { code?: unknown; lines?: unknown };
  if (code === "ENOENT")
    return new DataSourceError("csv", `file not found: ${path}`, { retriable: false, cause: error });
  if (typeof code === "string" && code.startsWith("CSV_")) {
    // csv-parse's own message may quote the field ("value is ..."), so it is rebuilt from code and line.
    const where = typeof lines === "number" ? ` at line ${lines}` : "";
    const problem = csvProblems[code] ?? "malformed CSV";
    return new DataSourceError("csv", `${problem} in ${path}${where} (${code})`, {
      retriable: false,
      cause: error,
    });
  }
  const reason = typeof code === "string" ? code : error instanceof Error ? error.name : "unknown error";
  return new DataSourceError("csv", `cannot read ${path} (${reason})`, { cause: error });
}

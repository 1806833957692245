import { createReadStream } from "node:fs";
import { resolve } from "node:path";
import { parse } from "csv-parse";
import type { DataSourceConfig } from "@matoolkit/domain";
import { DataSourceError } from "../datasource-error.ts";
import { requireSetting } from "../environment.ts";
import type { DataRow, SourceQuery } from "../types.ts";

/**
 * A CSV file as a data source, so the automated lifecycle runs on a laptop: a header row names
 * the columns, every value is a trimmed string. Streamed, so a large file never sits in memory
 * twice. Errors name the line and csv-parse's code, never cell values (member data).
 */
export async function queryCsv(
  config: DataSourceConfig,
  baseDir: string,
  query: SourceQuery,
): Promise<DataRow[]> {
  const path = requireSetting("csv", "path", config.path);
  const file = createReadStream(resolve(baseDir, path));
  const parser = parse({
    columns: (header: string[]) => header.map((name) => name.trim()),
    bom: true,
    trim: true,
    skip_empty_lines: true,
    ...(query.limit === undefined ? {} : { to: query.limit }),
  });
  // pipe() does not forward the file's errors (ENOENT): the parser would wait forever.
  file.on("error", (error) => parser.destroy(error));
  file.pipe(parser);
  const rows: DataRow[] = [];
  try {
    for await (const record of parser as AsyncIterable<Record<string, string>>) {
      if (query.signal.aborted) break;
      rows.push(record);
    }
  } catch (error) {
    throw toDataSourceError(error, path);
  } finally {
    file.destroy();
    parser.destroy();
  }
  if (query.signal.aborted) throw query.signal.reason as Error;
  return rows;
}

const csvProblems: Readonly<Record<string, string>> = {
  CSV_RECORD_INCONSISTENT_COLUMNS: "a row has a different number of fields than the header",
  CSV_RECORD_INCONSISTENT_FIELDS_LENGTH: "a row has a different number of fields than the header",
  CSV_QUOTE_NOT_CLOSED: "a quoted field is not closed",
  CSV_INVALID_CLOSING_QUOTE: "a quoted field has text after its closing quote",
  CSV_INVALID_OPENING_QUOTE: "a field has a quote inside unquoted text",
};

function toDataSourceError(error: unknown, path: string): DataSourceError {
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

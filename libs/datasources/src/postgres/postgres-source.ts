import pg from "pg";
import type { DataSourceConfig } from "@matoolkit/domain";
import { DataSourceError } from "../datasource-error.ts";
import { readEnvVar, requireSetting } from "../environment.ts";
import { describeDriverError } from "../redact.ts";
import { withoutTrailingSemicolons } from "../sql-text.ts";
import type { DataRow, SourceQuery } from "../types.ts";

type Env = Readonly<Record<string, string | undefined>>;

/** Rows per FETCH: a few hundred kilobytes of rows in memory, whatever the result's size. */
const FETCH_ROWS = 2_000;

/**
 * Any PostgreSQL query as a data source (laptops, tests, bench). One short-lived connection per
 * query: a tick runs every few minutes, so a pool would only hold idle connections.
 *
 * Read-only by construction: the query runs inside `BEGIN READ ONLY` and is sent with the
 * extended protocol, which refuses several statements in one string, so a query such as
 * `COMMIT; DELETE ...` cannot leave the read-only transaction.
 *
 * Streamed: the query is a cursor read FETCH_ROWS rows at a time, so a result of a million rows
 * is never held whole (the scheduler stages rows as they come). A consumer that stops early
 * (break, throw) ends the connection, which ends the statement.
 */
export async function* streamPostgres(
  config: DataSourceConfig,
  env: Env,
  query: SourceQuery,
): AsyncGenerator<DataRow> {
  const sql = requireSetting("postgres", "query", config.query);
  const url = readEnvVar("postgres", "connection", config.connection, env);
  const { signal } = query;
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: query.timeoutMs,
    application_name: "matoolkit-datasource",
  });
  // pg takes no signal: ending the connection makes the running query reject at once.
  const onAbort = (): void => void client.end().catch(() => undefined);
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    let rows: DataRow[];
    try {
      await client.connect();
      await client.query("BEGIN READ ONLY");
      await client.query("SELECT set_config('statement_timeout', $1, true)", [String(query.timeoutMs)]);
      const select =
        query.limit === undefined
          ? withoutTrailingSemicolons(sql)
          : // Line breaks, so a query ending in a `--` comment cannot comment out the closing parenthesis.
            `SELECT * FROM (\n${withoutTrailingSemicolons(sql)}\n) AS q LIMIT ${query.limit}`;
      const declare: pg.QueryConfig & { queryMode: "extended" } = {
        text: `DECLARE matoolkit_source_rows NO SCROLL CURSOR FOR\n${select}\n`,
        queryMode: "extended",
      };
      await client.query(declare);
      rows = await fetchRows(client);
    } catch (error) {
      throw failure(error);
    }
    while (rows.length > 0) {
      // The next rows are on their way while the consumer works on these.
      const next = rows.length < FETCH_ROWS ? undefined : fetchRows(client);
      next?.catch(() => undefined);
      // Handed over one at a time and released, so only the consumer's copies stay.
      for (let index = 0; index < rows.length; index++) {
        const row = rows[index] as DataRow;
        (rows as (DataRow | undefined)[])[index] = undefined;
        yield row;
      }
      if (next === undefined) break;
      try {
        rows = await next;
      } catch (error) {
        throw failure(error);
      }
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
    await client.end().catch(() => undefined);
  }

  function failure(error: unknown): Error {
    if (signal.aborted) return signal.reason as Error;
    return toDataSourceError(error, partsOf(url));
  }
}

async function fetchRows(client: pg.Client): Promise<DataRow[]> {
  return (await client.query<DataRow>(`FETCH ${FETCH_ROWS} FROM matoolkit_source_rows`)).rows;
}

/**
 * The variable's value and the parts of it a server error quotes back (`role "x" does not
 * exist`, `database "y" does not exist`): removed from messages, whatever variable was named.
 */
function partsOf(url: string): string[] {
  try {
    const parsed = new URL(url);
    const parts = [parsed.username, parsed.password, parsed.pathname.slice(1)].map(decodeURIComponent);
    return [url, ...parts].filter((part) => part.length > 0);
  } catch {
    return [url];
  }
}

function toDataSourceError(error: unknown, secrets: readonly string[]): DataSourceError {
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && /^2[23]/u.test(code)) {
    // Data exceptions and constraint violations quote the offending value in double quotes,
    // like identifiers, so their text cannot be told apart from member data: code only.
    return new DataSourceError("postgres", `query failed: data exception (SQLSTATE ${code})`, {
      cause: error,
    });
  }
  if (code === "57014") {
    return new DataSourceError("postgres", "query failed: statement timeout reached", { cause: error });
  }
  const sqlState = typeof code === "string" && /^[0-9A-Z]{5}$/u.test(code) ? ` (SQLSTATE ${code})` : "";
  return new DataSourceError("postgres", `query failed: ${describeDriverError(error, secrets)}${sqlState}`, {
    cause: error,
  });
}

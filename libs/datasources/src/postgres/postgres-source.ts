import pg from "pg";
import type { DataSourceConfig } from "@matoolkit/domain";
import { DataSourceError } from "../datasource-error.ts";
import { readEnvVar, requireSetting } from "../environment.ts";
import { describeDriverError } from "../redact.ts";
import { withoutTrailingSemicolons } from "../sql-text.ts";
import type { DataRow, SourceQuery } from "../types.ts";

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Any PostgreSQL query as a data source (laptops, tests, bench). One short-lived connection per
 * query: a tick runs every few minutes, so a pool would only hold idle connections.
 *
 * Read-only by construction: the query runs inside `BEGIN READ ONLY` and is sent with the
 * extended protocol, which refuses several statements in one string, so a query such as
 * `COMMIT; DELETE ...` cannot leave the read-only transaction.
 */
export async function queryPostgres(
  config: DataSourceConfig,
  env: Env,
  query: SourceQuery,
): Promise<DataRow[]> {
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
    await client.connect();
    await client.query("BEGIN READ ONLY");
    await client.query("SELECT set_config('statement_timeout', $1, true)", [String(query.timeoutMs)]);
    const text =
      query.limit === undefined
        ? sql
        : // Line breaks, so a query ending in a `--` comment cannot comment out the closing parenthesis.
          `SELECT * FROM (\n${withoutTrailingSemicolons(sql)}\n) AS q LIMIT ${query.limit}`;
    const statement: pg.QueryConfig & { queryMode: "extended" } = { text, queryMode: "extended" };
    const result = await client.query<DataRow>(statement);
    await client.query("ROLLBACK");
    return result.rows;
  } catch (error) {
    if (signal.aborted) throw signal.reason as Error;
    throw toDataSourceError(error, partsOf(url));
  } finally {
    signal.removeEventListener("abort", onAbort);
    await client.end().catch(() => undefined);
  }
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

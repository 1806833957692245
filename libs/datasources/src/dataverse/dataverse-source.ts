import type { DataSourceConfig } from "@matoolkit/domain";
import { getAccessToken, type CredentialProvider } from "../credential.ts";
import { DataSourceError } from "../datasource-error.ts";
import { raceAbort } from "../deadline.ts";
import { readEnvVar, requireSetting } from "../environment.ts";
import { describeDriverError } from "../redact.ts";
import type { DataRow, SourceQuery } from "../types.ts";
import { parseDataverseEndpoint } from "./connection-string.ts";
import { isResultSizeLimitError, resultTooLargeProblem } from "./result-size-limit.ts";
import type { SqlServerConnection, SqlServerConnector } from "./sql-server-connector.ts";

export interface DataverseSourceDeps {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly credentials: CredentialProvider;
  readonly connector: SqlServerConnector;
}

/**
 * Entra scope for an environment: its organization URL + `/.default`, the form Microsoft's Web API
 * quick start uses with MSAL (`var scope = resource + "/.default";`, resource
 * `https://<env>.crm.dynamics.com`):
 * https://learn.microsoft.com/power-apps/developer/data-platform/webapi/quick-start-console-app-csharp
 * The TDS endpoint takes the same Dataverse token ("uses the Dataverse security model"):
 * https://learn.microsoft.com/power-apps/developer/data-platform/dataverse-sql-query
 */
function dataverseScope(host: string): string {
  return `https://${host}/.default`;
}

/**
 * Runs the query on the Dataverse TDS endpoint (SQL Server protocol) as the scheduler's Entra
 * identity. The endpoint is read-only by design (Microsoft Learn, "Use SQL to query data").
 */
export async function queryDataverse(
  config: DataSourceConfig,
  deps: DataverseSourceDeps,
  query: SourceQuery,
): Promise<DataRow[]> {
  const sql = requireSetting("dataverse", "query", config.query);
  const variableName = config.connection ?? "";
  const endpoint = parseDataverseEndpoint(
    readEnvVar("dataverse", "connection", config.connection, deps.env),
    variableName,
  );
  const accessToken = await getAccessToken(
    "dataverse",
    deps.credentials,
    dataverseScope(endpoint.host),
    query.signal,
  );
  const fail = (stage: string, error: unknown): Error => {
    if (query.signal.aborted) return query.signal.reason as Error;
    if (isResultSizeLimitError(error)) {
      return new DataSourceError("dataverse", resultTooLargeProblem, {
        retriable: false,
        cause: error,
      });
    }
    return new DataSourceError("dataverse", `${stage}: ${describeDriverError(error, [accessToken])}`, {
      cause: error,
    });
  };

  let connection: SqlServerConnection;
  try {
    const connecting = deps.connector({
      server: endpoint.host,
      port: endpoint.port,
      database: endpoint.database,
      accessToken,
      timeoutMs: query.timeoutMs,
    });
    // A connection that opens after the deadline would otherwise stay open.
    connecting.then(
      (late) => void (query.signal.aborted ? late.close().catch(() => undefined) : undefined),
      () => undefined,
    );
    connection = await raceAbort(connecting, query.signal);
  } catch (error) {
    throw fail("cannot connect", error);
  }
  // Closing is how a running TDS request is cancelled on timeout or abort.
  const onAbort = (): void => void connection.close().catch(() => undefined);
  query.signal.addEventListener("abort", onAbort, { once: true });
  try {
    // The query is not wrapped, neither for a limit nor to page past the endpoint's 80 MB cap
    // (TOP … WHERE key > @last ORDER BY key): T-SQL refuses ORDER BY without TOP and WITH inside
    // a derived table, and the documented Dataverse subset ("How Dataverse SQL differs from
    // Transact-SQL") lists no query parameters and no stored procedures, so the last key would be
    // spliced into SQL text. The driver stops reading for a limit instead; over 80 MB the error
    // says what to change in the query.
    const rows = await raceAbort(
      connection.query(sql, query.limit === undefined ? {} : { maxRows: query.limit }),
      query.signal,
    );
    return query.limit === undefined ? rows : rows.slice(0, query.limit);
  } catch (error) {
    throw fail("query failed", error);
  } finally {
    query.signal.removeEventListener("abort", onAbort);
    await connection.close().catch(() => undefined);
  }
}

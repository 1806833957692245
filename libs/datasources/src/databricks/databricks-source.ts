import type { DataSourceConfig } from "@matoolkit/domain";
import { getAccessToken, type CredentialProvider } from "../credential.ts";
import { DataSourceError } from "../datasource-error.ts";
import { sleep } from "../deadline.ts";
import { readEnvVar, requireSetting } from "../environment.ts";
import type { DataRow, SourceQuery } from "../types.ts";
import { describeApiError, StatementApi } from "./statement-api.ts";
import type { StatementResponse } from "./statement-schemas.ts";
import { toRows } from "./rows.ts";

/** The Azure Databricks first-party application: its `.default` scope yields workspace tokens. */
export const azureDatabricksScope = "2ff814a6-3304-4ab8-85cb-cd0e6f879c1d/.default";

/** Status polls: quick at first (short queries), then every 5 s at most. */
const firstPollDelayMs = 100;
const maxPollDelayMs = 5_000;

export interface DatabricksSourceDeps {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly credentials: CredentialProvider;
  readonly fetch: typeof fetch;
}

/**
 * Runs the query through the SQL Statement Execution API 2.0: submit (waiting up to 30 s
 * inline), poll while PENDING/RUNNING, then read every INLINE JSON_ARRAY chunk. On timeout or
 * abort the statement is cancelled, so the warehouse does not keep working for nobody.
 */
export async function queryDatabricks(
  config: DataSourceConfig,
  deps: DatabricksSourceDeps,
  query: SourceQuery,
): Promise<DataRow[]> {
  const statement = requireSetting("databricks", "query", config.query);
  const workspace = workspaceUrl(readEnvVar("databricks", "connection", config.connection, deps.env), config);
  const warehouseId = readEnvVar("databricks", "warehouse_id", config.warehouseId, deps.env);
  const token = await getAccessToken("databricks", deps.credentials, azureDatabricksScope, query.signal);
  const api = new StatementApi(deps.fetch, workspace, token, query.signal);

  let response = await api.submit({
    statement,
    warehouse_id: warehouseId,
    // Waiting inline must end well before the deadline, or a timed-out submit leaves no id to cancel.
    wait_timeout: query.timeoutMs >= 40_000 ? "30s" : "0s",
    on_wait_timeout: "CONTINUE",
    format: "JSON_ARRAY",
    disposition: "INLINE",
    ...(query.limit === undefined ? {} : { row_limit: query.limit }),
  });
  const statementId = response.statement_id;
  try {
    for (let delay = firstPollDelayMs; isRunning(response); delay = Math.min(delay * 2, maxPollDelayMs)) {
      await sleep(delay, query.signal);
      response = await api.get(statementId);
    }
    if (response.status.state !== "SUCCEEDED") throw finalStateError(api, response);
    return await readAllChunks(api, statementId, response, query.limit);
  } catch (error) {
    if (query.signal.aborted) await api.cancel(statementId);
    throw error;
  }
}

function isRunning(response: StatementResponse): boolean {
  return response.status.state === "PENDING" || response.status.state === "RUNNING";
}

function finalStateError(api: StatementApi, response: StatementResponse): DataSourceError {
  const { state, error } = response.status;
  return api.fail(`statement ${state}${describeApiError(error)}`);
}

async function readAllChunks(
  api: StatementApi,
  statementId: string,
  response: StatementResponse,
  limit: number | undefined,
): Promise<DataRow[]> {
  const columns = response.manifest?.schema?.columns ?? [];
  const hasRows = (response.manifest?.total_chunk_count ?? 0) > 0;
  // GET statement normally carries chunk 0; fetch it by index when it does not.
  let chunk =
    response.result ??
    (hasRows
      ? await api.chunk(`/api/2.0/sql/statements/${encodeURIComponent(statementId)}/result/chunks/0`)
      : undefined);
  const rows: DataRow[] = [];
  while (chunk !== undefined) {
    if (chunk.data_array !== undefined && columns.length === 0)
      throw api.fail("result has rows but no column schema");
    // A loop, not push(...rows): spreading a large chunk as arguments overflows the stack.
    for (const row of toRows(columns, chunk.data_array ?? [])) rows.push(row);
    if (limit !== undefined && rows.length >= limit) return rows.slice(0, limit);
    const next = chunk.next_chunk_internal_link;
    chunk = next === undefined ? undefined : await api.chunk(next);
  }
  return rows;
}

const loopbackHosts = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * The `connection` variable holds the workspace URL; a bare host name means https. Plain http is
 * accepted for loopback stand-ins only: anywhere else it would send the Bearer token in clear.
 */
function workspaceUrl(value: string, config: DataSourceConfig): URL {
  try {
    const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//iu.test(value) ? value : `https://${value}`);
    const allowed =
      url.protocol === "https:" || (url.protocol === "http:" && loopbackHosts.has(url.hostname));
    if (allowed) return new URL(url.origin);
  } catch {
    // Reported below without the value: a mistyped variable may hold a secret.
  }
  throw new DataSourceError(
    "databricks",
    `environment variable ${config.connection ?? ""} (data_source.connection) is not an https workspace URL`,
    { retriable: false },
  );
}

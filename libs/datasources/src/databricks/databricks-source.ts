import type { DataSourceConfig } from "@matoolkit/domain";
import { getAccessToken, type CredentialProvider } from "../credential.ts";
import { readEnvVar, requireSetting } from "../environment.ts";
import type { DataRow, SourceQuery } from "../types.ts";
import { awaitStatement } from "./await-statement.ts";
import type { DatabricksTiming } from "./databricks-timing.ts";
import { readResultRows } from "./result-rows.ts";
import { describeApiError, StatementApi } from "./statement-api.ts";
import type { Disposition, ExecuteStatementRequest, StatementResponse } from "./statement-schemas.ts";
import { workspaceUrl } from "./workspace-url.ts";

/** The Azure Databricks first-party application: its `.default` scope yields workspace tokens. */
export const azureDatabricksScope = "2ff814a6-3304-4ab8-85cb-cd0e6f879c1d/.default";

/**
 * Previews of at most this many rows stay INLINE (one round trip, no storage download). INLINE
 * results are capped at 25 MiB ("If a given statement produces a result set with a size larger
 * than 25 MiB, that statement execution is aborted", docs: Execute Statement, disposition), a
 * size a full member list passes easily; EXTERNAL_LINKS serves any size (up to 100 GiB).
 */
export const maxInlineRows = 2_000;

export interface DatabricksSourceDeps {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly credentials: CredentialProvider;
  readonly fetch: typeof fetch;
  readonly warehouseStartTimeoutMs: number;
  readonly timing: DatabricksTiming;
}

/**
 * Streams the query's rows through the SQL Statement Execution API 2.0: submit (waiting up to
 * 30 s inline), poll while PENDING/RUNNING, then read the result chunk by chunk. A small preview
 * asks for INLINE and, should its rows still pass the 25 MiB INLINE limit, runs again with
 * EXTERNAL_LINKS (the first statement FAILED: nothing runs twice).
 */
export async function* streamDatabricks(
  config: DataSourceConfig,
  deps: DatabricksSourceDeps,
  query: SourceQuery,
): AsyncGenerator<DataRow> {
  const statement = requireSetting("databricks", "query", config.query);
  const workspace = workspaceUrl(readEnvVar("databricks", "connection", config.connection, deps.env), config);
  const warehouseId = readEnvVar("databricks", "warehouse_id", config.warehouseId, deps.env);
  const token = await getAccessToken("databricks", deps.credentials, azureDatabricksScope, query.signal);
  const api = new StatementApi(deps.fetch, workspace, token, query.signal, deps.timing.retry);
  const dispositions: Disposition[] =
    query.limit !== undefined && query.limit <= maxInlineRows
      ? ["INLINE", "EXTERNAL_LINKS"]
      : ["EXTERNAL_LINKS"];
  for (const disposition of dispositions) {
    const outcome = yield* runStatement(api, deps, query, {
      statement,
      warehouse_id: warehouseId,
      // Waiting inline must end well before the deadline, or a timed-out submit leaves no id to cancel.
      wait_timeout: query.timeoutMs >= 40_000 ? "30s" : "0s",
      on_wait_timeout: "CONTINUE",
      format: "JSON_ARRAY",
      disposition,
      ...(query.limit === undefined ? {} : { row_limit: query.limit }),
    });
    if (outcome === "read") return;
  }
}

/**
 * One statement, submitted and read. Whenever it may still hold the warehouse and its rows are
 * not all read (an error, the deadline, the consumer stopping early), it is cancelled, so the
 * warehouse never works for nobody.
 */
async function* runStatement(
  api: StatementApi,
  deps: DatabricksSourceDeps,
  query: SourceQuery,
  request: ExecuteStatementRequest,
): AsyncGenerator<DataRow, "read" | "too large for INLINE"> {
  const submitted = await api.submit(request);
  const statementId = submitted.statement_id;
  let finished = false;
  try {
    const response = await awaitStatement(api, submitted, {
      signal: query.signal,
      budget: query.budget,
      warehouseStartTimeoutMs: deps.warehouseStartTimeoutMs,
      timing: deps.timing,
    });
    if (response.status.state !== "SUCCEEDED") {
      finished = true; // FAILED, CANCELED or CLOSED: nothing left to cancel.
      if (request.disposition === "INLINE" && passedInlineLimit(response)) return "too large for INLINE";
      throw finalStateError(api, response);
    }
    const download = { fetch: deps.fetch, signal: query.signal, policy: deps.timing.retry };
    yield* readResultRows({ api, statementId, download, limit: query.limit }, response);
    finished = true;
    return "read";
  } finally {
    if (!finished) await api.cancel(statementId);
  }
}

/**
 * Databricks has no error code of its own for it (BAD_REQUEST), only the message: "Inline byte
 * limit exceeded. Statements executed with disposition=INLINE can have a result size of at most
 * 26214400 bytes. Please execute the statement with disposition=EXTERNAL_LINKS ..."
 * (github.com/databrickslabs/ucx/issues/3447).
 */
function passedInlineLimit(response: StatementResponse): boolean {
  return response.status.error?.message?.startsWith("Inline byte limit exceeded") === true;
}

function finalStateError(api: StatementApi, response: StatementResponse) {
  const { state, error } = response.status;
  return api.fail(`statement ${state}${describeApiError(error)}`);
}

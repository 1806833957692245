import type { TokenCredential } from "@azure/identity";
import type { DataSourceConfig } from "@matoolkit/domain";
import type { DatabricksTiming } from "./databricks/databricks-timing.ts";
import type { QueryBudget } from "./deadline.ts";
import type { SqlServerConnector } from "./dataverse/sql-server-connector.ts";
import type { SourceAccessProblem } from "./source-access.ts";

/** One result row: column name → value as the driver returned it (strings for CSV). */
export type DataRow = Record<string, unknown>;

export interface DataSourceQueryOptions {
  /** At most this many rows (query preview); pushed down to the source where it can be. */
  readonly limit?: number;
  /** Cancels the query; the source's own statement is cancelled too where the protocol allows. */
  readonly signal?: AbortSignal;
}

export interface DataSourceClient {
  /** Runs the runbook's query and returns every row (column name → value): for small results (previews). */
  query(config: DataSourceConfig, options?: DataSourceQueryOptions): Promise<DataRow[]>;
  /**
   * Runs the runbook's query and yields its rows as they arrive; a Databricks result of any size
   * is never held whole. The deadline covers the whole iteration (the consumer's time between
   * rows included) and ends with it; a consumer that stops early (break, throw) cancels the
   * source's statement. Nothing runs until the first row is asked for.
   */
  rows(config: DataSourceConfig, options?: DataSourceQueryOptions): AsyncIterable<DataRow>;
  /**
   * What this server would refuse to read or connect to for `config` (a csv path outside its
   * directory, an env var a runbook may not name): the publish-time check. Empty when allowed.
   */
  accessProblems(config: DataSourceConfig): Promise<SourceAccessProblem[]>;
}

export interface DataSourceDeps {
  /** Values for the env-var NAMES in YAML (connection, warehouse_id): the entry point passes process.env. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Entra credential for Databricks and Dataverse, from the entry point (`lazyAzureCredential` of @matoolkit/platform); none: those sources fail with a clear error. */
  readonly credential?: TokenCredential;
  /** For Databricks; defaults to the global fetch. */
  readonly fetch?: typeof fetch;
  /** Whole-query timeout (connect, run, fetch every chunk, hand over every row); default 120 s. */
  readonly timeoutMs?: number;
  /**
   * Databricks: how long a statement may wait for its warehouse (PENDING: starting, or queued)
   * before it is cancelled; default 10 minutes. That wait does not count against `timeoutMs`,
   * which starts when the statement leaves PENDING: a cold warehouse takes minutes to start.
   */
  readonly warehouseStartTimeoutMs?: number;
  /** Databricks status polling and HTTP retries; the defaults suit production, tests shorten them. */
  readonly databricksTiming?: Partial<DatabricksTiming>;
  /** Dataverse driver seam; default: tedious. */
  readonly sqlServer?: SqlServerConnector;
  /**
   * The only directory `csv` sources may read (MATOOLKIT_CSV_DIR): runbook paths are relative to
   * it and may not leave it (no absolute paths, `..` or symlinks out). Absent: csv sources are
   * refused. Never a directory holding the server's own files (data dir, signing key).
   */
  readonly baseDir?: string;
}

/** What the router hands one source: the deadline-bound signal and the time it has in total. */
export interface SourceQuery {
  readonly limit?: number;
  readonly signal: AbortSignal;
  readonly timeoutMs: number;
  /** The deadline behind `signal`, for a source whose waits run on another budget (Databricks). */
  readonly budget?: QueryBudget;
}

import type { TokenCredential } from "@azure/identity";
import type { DataSourceConfig } from "@matoolkit/domain";
import type { SqlServerConnector } from "./dataverse/sql-server-connector.ts";

/** One result row: column name → value as the driver returned it (strings for CSV). */
export type DataRow = Record<string, unknown>;

export interface DataSourceQueryOptions {
  /** At most this many rows (query preview); pushed down to the source where it can be. */
  readonly limit?: number;
  /** Cancels the query; the source's own statement is cancelled too where the protocol allows. */
  readonly signal?: AbortSignal;
}

export interface DataSourceClient {
  /** Runs the runbook's query and returns every row (column name → value). */
  query(config: DataSourceConfig, options?: DataSourceQueryOptions): Promise<DataRow[]>;
}

export interface DataSourceDeps {
  /** Values for the env-var NAMES in YAML (connection, warehouse_id): the entry point passes process.env. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Entra credential for Databricks and Dataverse; default DefaultAzureCredential, created lazily. */
  readonly credential?: TokenCredential;
  /** For Databricks; defaults to the global fetch. */
  readonly fetch?: typeof fetch;
  /** Whole-query timeout (connect, run, fetch every chunk); default 120 s. */
  readonly timeoutMs?: number;
  /** Dataverse driver seam; default: tedious. */
  readonly sqlServer?: SqlServerConnector;
  /** Base for relative csv paths; default the process's working directory. */
  readonly baseDir?: string;
}

/** What the router hands one source: the deadline-bound signal and the time it has in total. */
export interface SourceQuery {
  readonly limit?: number;
  readonly signal: AbortSignal;
  readonly timeoutMs: number;
}

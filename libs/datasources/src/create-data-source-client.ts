import { toSafeError, type DataSourceConfig, type DataSourceType } from "@matoolkit/domain";
import { lazyCredential } from "./credential.ts";
import { queryCsv } from "./csv/csv-source.ts";
import { queryDatabricks } from "./databricks/databricks-source.ts";
import { DataSourceError } from "./datasource-error.ts";
import { queryDataverse } from "./dataverse/dataverse-source.ts";
import { tediousConnector } from "./dataverse/tedious-connector.ts";
import { startDeadline } from "./deadline.ts";
import { queryPostgres } from "./postgres/postgres-source.ts";
import { redactLiterals } from "./redact.ts";
import { assertLimit } from "./sql-text.ts";
import type {
  DataRow,
  DataSourceClient,
  DataSourceDeps,
  DataSourceQueryOptions,
  SourceQuery,
} from "./types.ts";

export const defaultDataSourceTimeoutMs = 120_000;

/**
 * The scheduler's DataSourceQueryService (000 "Scheduler Internals"): routes a runbook's
 * data_source to its client by type. Every failure, whatever the driver threw, comes out as a
 * DataSourceError with a sanitized message, so a failing or slow source fails that runbook's
 * tick (last_error) and never the scheduler.
 */
export function createDataSourceClient(deps: DataSourceDeps): DataSourceClient {
  const credentials = lazyCredential(deps.credential);
  const timeoutMs = deps.timeoutMs ?? defaultDataSourceTimeoutMs;
  const baseDir = deps.baseDir ?? process.cwd();

  function run(config: DataSourceConfig, query: SourceQuery): Promise<DataRow[]> {
    const type: DataSourceType = config.type;
    switch (type) {
      case "postgres":
        return queryPostgres(config, deps.env, query);
      case "csv":
        return queryCsv(config, baseDir, query);
      case "databricks":
        return queryDatabricks(config, { env: deps.env, credentials, fetch: deps.fetch ?? fetch }, query);
      case "dataverse":
        return queryDataverse(
          config,
          { env: deps.env, credentials, connector: deps.sqlServer ?? tediousConnector },
          query,
        );
      default: {
        const unreachable: never = type;
        throw new DataSourceError(config.type, `unknown data source type ${String(unreachable)}`, {
          retriable: false,
        });
      }
    }
  }

  return {
    async query(config: DataSourceConfig, options: DataSourceQueryOptions = {}): Promise<DataRow[]> {
      assertLimit(options.limit);
      const deadline = startDeadline(config.type, timeoutMs, options.signal);
      try {
        return await run(config, { limit: options.limit, signal: deadline.signal, timeoutMs });
      } catch (error) {
        if (error instanceof DataSourceError) throw error;
        if (deadline.signal.aborted) throw deadline.signal.reason as Error;
        // Not anticipated by the source's own mapping: keep the sanitized text, lose nothing secret.
        throw new DataSourceError(
          config.type,
          `unexpected error: ${redactLiterals(toSafeError(error).message)}`,
          { cause: error },
        );
      } finally {
        deadline.dispose();
      }
    },
  };
}

import { toSafeError, type DataSourceConfig, type DataSourceType } from "@matoolkit/domain";
import { lazyCredential } from "./credential.ts";
import { streamCsv } from "./csv/csv-source.ts";
import { streamDatabricks } from "./databricks/databricks-source.ts";
import { databricksTiming, defaultWarehouseStartTimeoutMs } from "./databricks/databricks-timing.ts";
import { DataSourceError } from "./datasource-error.ts";
import { queryDataverse } from "./dataverse/dataverse-source.ts";
import { tediousConnector } from "./dataverse/tedious-connector.ts";
import { startDeadline } from "./deadline.ts";
import { streamPostgres } from "./postgres/postgres-source.ts";
import { redactLiterals } from "./redact.ts";
import { sourceAccessProblems } from "./source-access.ts";
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
  // No default: the working directory holds the data dir (signing key, database files).
  const csvDir = deps.baseDir;
  const databricks = {
    env: deps.env,
    credentials,
    fetch: deps.fetch ?? fetch,
    warehouseStartTimeoutMs: deps.warehouseStartTimeoutMs ?? defaultWarehouseStartTimeoutMs,
    timing: databricksTiming(deps.databricksTiming),
  };

  /** Databricks, csv and postgres stream natively; the Dataverse driver returns arrays. */
  function stream(config: DataSourceConfig, query: SourceQuery): AsyncIterable<DataRow> {
    const type: DataSourceType = config.type;
    switch (type) {
      case "postgres":
        return streamPostgres(config, deps.env, query);
      case "csv":
        return streamCsv(config, csvDir, query);
      case "databricks":
        return streamDatabricks(config, databricks, query);
      case "dataverse":
        return handOver(() =>
          queryDataverse(
            config,
            { env: deps.env, credentials, connector: deps.sqlServer ?? tediousConnector },
            query,
          ),
        );
      default: {
        const unreachable: never = type;
        throw new DataSourceError(config.type, `unknown data source type ${String(unreachable)}`, {
          retriable: false,
        });
      }
    }
  }

  async function* rows(
    config: DataSourceConfig,
    options: DataSourceQueryOptions = {},
  ): AsyncGenerator<DataRow> {
    assertLimit(options.limit);
    const deadline = startDeadline(config.type, timeoutMs, options.signal);
    const query: SourceQuery = { limit: options.limit, signal: deadline.signal, timeoutMs, budget: deadline };
    try {
      // Each source honours the limit itself (pushed down where it can be).
      for await (const row of stream(config, query)) {
        // The deadline covers the consumer's time too: a tick never outlives its source's budget.
        if (deadline.signal.aborted) throw deadline.signal.reason as Error;
        yield row;
      }
    } catch (error) {
      throw asDataSourceError(config.type, error, deadline.signal);
    } finally {
      deadline.dispose();
    }
  }

  return {
    rows,
    accessProblems: (config) => sourceAccessProblems(config, csvDir),
    async query(config: DataSourceConfig, options: DataSourceQueryOptions = {}): Promise<DataRow[]> {
      const all: DataRow[] = [];
      for await (const row of rows(config, options)) all.push(row);
      return all;
    },
  };
}

/** Yields a driver's array row by row, releasing each: the consumer's copies replace it. */
async function* handOver(load: () => Promise<DataRow[]>): AsyncGenerator<DataRow> {
  const all: (DataRow | undefined)[] = await load();
  for (let index = 0; index < all.length; index++) {
    const row = all[index] as DataRow;
    all[index] = undefined;
    yield row;
  }
}

function asDataSourceError(sourceType: DataSourceType, error: unknown, signal: AbortSignal): Error {
  if (error instanceof DataSourceError) return error;
  if (signal.aborted) return signal.reason as Error;
  // Not anticipated by the source's own mapping: keep the sanitized text, lose nothing secret.
  return new DataSourceError(sourceType, `unexpected error: ${redactLiterals(toSafeError(error).message)}`, {
    cause: error,
  });
}

import { MatoolkitError, reasonCodes, type DataSourceType, type ReasonCode } from "@matoolkit/domain";

/**
 * Reason code of every data source failure (the domain's reasonCodes.dataSourceFailed). A
 * runbook's last_error carries it, so it is part of the operator contract: never rename it.
 */
export const dataSourceFailedReason: ReasonCode = reasonCodes.dataSourceFailed;

export interface DataSourceErrorOptions {
  /** False for configuration problems (missing variable, bad URL) that no retry can fix. */
  readonly retriable?: boolean;
  /** The driver's error, for logs only (never persisted: it may hold values). */
  readonly cause?: unknown;
}

/**
 * A data source query failed. The message names the source type and the problem, e.g.
 * "postgres source: environment variable MEMBERS_DB_URL is not set"; it never holds connection
 * strings, tokens or row values (MatoolkitError sanitizes it once more on construction).
 */
export class DataSourceError extends MatoolkitError {
  readonly sourceType: DataSourceType;

  constructor(sourceType: DataSourceType, problem: string, options: DataSourceErrorOptions = {}) {
    super(dataSourceFailedReason, `${sourceType} source: ${problem}`, options);
    this.sourceType = sourceType;
  }
}

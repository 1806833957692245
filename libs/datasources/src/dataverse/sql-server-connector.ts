import type { DataRow } from "../types.ts";

export interface SqlServerConnectOptions {
  /** Host name, e.g. contoso.crm.dynamics.com. */
  readonly server: string;
  readonly port: number;
  readonly database?: string;
  /** Entra access token for `https://<server>/.default`; never logged. */
  readonly accessToken: string;
  /** Upper bound for connecting and for each request. */
  readonly timeoutMs: number;
}

export interface SqlServerConnection {
  /**
   * Runs one batch and returns its rows (column name → value). With `maxRows`, the request is
   * cancelled once that many rows have arrived and those rows are returned.
   */
  query(sql: string, options?: { readonly maxRows?: number }): Promise<DataRow[]>;
  /** Closes the connection; cancels a running request. Safe to call twice. */
  close(): Promise<void>;
}

/**
 * The driver-level seam for the Dataverse TDS endpoint (the issue allows one for TDS): tests
 * provide a fake, production uses the tedious connector.
 */
export type SqlServerConnector = (options: SqlServerConnectOptions) => Promise<SqlServerConnection>;

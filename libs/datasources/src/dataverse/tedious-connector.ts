import type { Connection, ConnectionConfiguration } from "tedious";
import type { DataRow } from "../types.ts";
import type { SqlServerConnection, SqlServerConnector } from "./sql-server-connector.ts";

/**
 * SQL Server over TDS with tedious (the maintained pure-JavaScript driver under `mssql`): one
 * connection per query, an Entra access token, TLS. Loaded on first use so deployments without
 * Dataverse never load it.
 *
 * No `readOnlyIntent`: it is SQL Server's ApplicationIntent=ReadOnly, a hint that routes to an
 * availability group's readable secondary. Microsoft's Dataverse TDS documentation never mentions
 * it (the endpoint is read-only as a whole), so sending it asked for behaviour nobody specified.
 */
export const tediousConnector: SqlServerConnector = async (options) => {
  const { Connection } = await import("tedious");
  const config: ConnectionConfiguration = {
    server: options.server,
    authentication: { type: "azure-active-directory-access-token", options: { token: options.accessToken } },
    options: {
      port: options.port,
      ...(options.database === undefined ? {} : { database: options.database }),
      encrypt: true,
      connectTimeout: options.timeoutMs,
      requestTimeout: options.timeoutMs,
      appName: "matoolkit-datasource",
    },
  };
  const connection = new Connection(config);
  // Without a listener a late socket error would crash the process; the pending call reports it.
  connection.on("error", () => undefined);
  await new Promise<void>((resolve, reject) => {
    connection.connect((error) => (error ? reject(error) : resolve()));
  });
  return wrap(connection);
};

function wrap(connection: Connection): SqlServerConnection {
  let closed: Promise<void> | undefined;
  return {
    query: async (sql, options = {}) => {
      const { Request } = await import("tedious");
      const { maxRows } = options;
      return new Promise<DataRow[]>((resolve, reject) => {
        const rows: DataRow[] = [];
        let enough = false;
        // A cancelled request reports an error; when we cancelled it for having enough rows, it is not one.
        const request = new Request(sql, (error) => (error && !enough ? reject(error) : resolve(rows)));
        request.on("row", (columns: Array<{ value: unknown; metadata: { colName: string } }>) => {
          if (enough) return;
          const row: DataRow = {};
          for (const column of columns) row[column.metadata.colName] = column.value;
          rows.push(row);
          if (maxRows !== undefined && rows.length >= maxRows) {
            enough = true;
            connection.cancel();
          }
        });
        // A plain SQL batch, as SSMS and SqlClient send a query without parameters: execSql would
        // wrap it in sp_executesql, a stored procedure call outside the endpoint's documented subset.
        connection.execSqlBatch(request);
      });
    },
    close: () => {
      closed ??= new Promise<void>((resolve) => {
        connection.once("end", () => resolve());
        connection.close();
      });
      return closed;
    },
  };
}

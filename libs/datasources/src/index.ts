export * from "./create-data-source-client.ts";
export * from "./datasource-error.ts";
export { azureDatabricksScope } from "./databricks/databricks-source.ts";
export * from "./dataverse/sql-server-connector.ts";
export { tediousConnector } from "./dataverse/tedious-connector.ts";
export type { DataRow, DataSourceClient, DataSourceDeps, DataSourceQueryOptions } from "./types.ts";

import { DataSourceError } from "../datasource-error.ts";

export interface DataverseEndpoint {
  readonly host: string;
  readonly port: number;
  readonly database?: string;
}

/** The TDS endpoint listens on 1433 and/or 5558 (Microsoft Learn, "Use SQL to query data"). */
const defaultPort = 1433;

/**
 * DATAVERSE_CONNECTION_STRING as an operator would write it: the organization URL
 * (`https://contoso.crm.dynamics.com`), a bare host (`contoso.crm.dynamics.com,5558`), or an
 * ADO.NET string (`Server=contoso.crm.dynamics.com,5558;Database=contoso`). Credentials in the
 * string are ignored: only Entra tokens are accepted by the endpoint.
 */
export function parseDataverseEndpoint(value: string, variableName: string): DataverseEndpoint {
  const settings = value.includes("=") ? parseKeyValues(value) : new Map([["server", value]]);
  const server = settings.get("server") ?? settings.get("data source") ?? settings.get("address") ?? "";
  const database = settings.get("database") ?? settings.get("initial catalog");
  const [hostPart = "", portPart] = server
    .trim()
    .replace(/^tcp:/iu, "")
    .replace(/^https?:\/\//iu, "")
    .replace(/\/.*$/u, "")
    .split(",");
  const host = hostPart.trim().toLowerCase();
  const port = portPart === undefined ? defaultPort : Number(portPart.trim());
  if (!/^[a-z0-9.-]+$/u.test(host) || !Number.isInteger(port) || port < 1 || port > 65535) {
    // The value is not repeated: a mistyped variable may hold a secret.
    throw new DataSourceError(
      "dataverse",
      `environment variable ${variableName} (data_source.connection) does not name a Dataverse host`,
      { retriable: false },
    );
  }
  return { host, port, ...(database === undefined || database === "" ? {} : { database }) };
}

function parseKeyValues(value: string): Map<string, string> {
  const settings = new Map<string, string>();
  for (const part of value.split(";")) {
    const separator = part.indexOf("=");
    if (separator < 0) continue;
    settings.set(part.slice(0, separator).trim().toLowerCase(), part.slice(separator + 1).trim());
  }
  return settings;
}

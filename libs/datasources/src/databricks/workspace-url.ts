import type { DataSourceConfig } from "@matoolkit/domain";
import { DataSourceError } from "../datasource-error.ts";

const loopbackHosts = new Set(["localhost", "127.0.0.1", "[::1]"]);

export function isLoopback(url: URL): boolean {
  return loopbackHosts.has(url.hostname);
}

/**
 * The `connection` variable holds the workspace URL; a bare host name means https. Plain http is
 * accepted for loopback stand-ins only: anywhere else it would send the Bearer token in clear.
 */
export function workspaceUrl(value: string, config: DataSourceConfig): URL {
  try {
    const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//iu.test(value) ? value : `https://${value}`);
    if (url.protocol === "https:" || (url.protocol === "http:" && isLoopback(url)))
      return new URL(url.origin);
  } catch {
    // Reported below without the value: a mistyped variable may hold a secret.
  }
  throw new DataSourceError(
    "databricks",
    `environment variable ${config.connection ?? ""} (data_source.connection) is not an https workspace URL`,
    { retriable: false },
  );
}

import type { DataSourceType } from "@matoolkit/domain";
import { DataSourceError } from "./datasource-error.ts";

/**
 * Runbooks name environment variables (000: "Environment variable name for connection
 * string/URL"), never secrets. Errors name the variable and the YAML key, never the value.
 *
 * A runbook may not name just any variable: an Admin could otherwise point a source at the
 * server's own database (`DATABASE_URL`) or feed a secret (`MATOOLKIT_CLIENT_SECRET`) to a driver
 * whose errors might echo it. Only variables the operator set for sources can be named: the
 * `MATOOLKIT_SOURCE_` prefix, plus 000's three names so its runbooks keep working.
 */
export const sourceEnvVarPrefix = "MATOOLKIT_SOURCE_";
export const specSourceEnvVars: readonly string[] = [
  "DATAVERSE_CONNECTION_STRING",
  "DATABRICKS_CONNECTION_STRING",
  "DATABRICKS_WAREHOUSE_ID",
];

/** Why a runbook may not name `variableName` ("may not be …"), or undefined when it may. */
export function sourceEnvVarProblem(variableName: string): string | undefined {
  if (specSourceEnvVars.includes(variableName)) return undefined;
  if (variableName.startsWith(sourceEnvVarPrefix) && variableName.length > sourceEnvVarPrefix.length) {
    return undefined;
  }
  return `may not be named by a runbook; use a ${sourceEnvVarPrefix}* variable`;
}

export function readEnvVar(
  sourceType: DataSourceType,
  yamlKey: string,
  variableName: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): string {
  if (variableName === undefined || variableName.trim() === "") {
    throw new DataSourceError(sourceType, `data_source.${yamlKey} must name an environment variable`, {
      retriable: false,
    });
  }
  const refused = sourceEnvVarProblem(variableName);
  if (refused !== undefined) {
    throw new DataSourceError(
      sourceType,
      `environment variable ${variableName} (data_source.${yamlKey}) ${refused}`,
      { retriable: false },
    );
  }
  const value = env[variableName];
  if (value === undefined || value.trim() === "") {
    throw new DataSourceError(
      sourceType,
      `environment variable ${variableName} (data_source.${yamlKey}) is not set`,
      { retriable: false },
    );
  }
  return value.trim();
}

/** The runbook parser checks these per type; this guards callers that build configs by hand. */
export function requireSetting(
  sourceType: DataSourceType,
  yamlKey: string,
  value: string | undefined,
): string {
  if (value === undefined || value.trim() === "") {
    throw new DataSourceError(sourceType, `data_source.${yamlKey} is required`, { retriable: false });
  }
  return value;
}

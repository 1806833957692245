import type { DataSourceType } from "@matoolkit/domain";
import { DataSourceError } from "./datasource-error.ts";

/**
 * Runbooks name environment variables (000: "Environment variable name for connection
 * string/URL"), never secrets. Errors name the variable and the YAML key, never the value.
 */
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

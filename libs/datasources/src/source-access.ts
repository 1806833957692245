import type { DataSourceConfig, DataSourceType } from "@matoolkit/domain";
import { checkCsvPath } from "./csv/csv-path.ts";
import { sourceEnvVarProblem } from "./environment.ts";

/** One `data_source` field this server would refuse to use, by its YAML key. */
export interface SourceAccessProblem {
  readonly field: "path" | "connection" | "warehouse_id";
  readonly message: string;
}

/**
 * What the server lets a runbook make it read or connect to, checked before a version is stored
 * (the same rules are enforced again on every query: a file or variable can change after publish).
 * A runbook names env vars, not hosts, so restricting the names is what restricts the hosts: every
 * reachable host comes from a variable the operator set for sources.
 */
export async function sourceAccessProblems(
  config: DataSourceConfig,
  csvDir: string | undefined,
): Promise<SourceAccessProblem[]> {
  const type: DataSourceType = config.type;
  switch (type) {
    case "csv":
      return csvProblems(config.path, csvDir);
    case "postgres":
    case "dataverse":
      return envProblems([["connection", config.connection]]);
    case "databricks":
      return envProblems([
        ["connection", config.connection],
        ["warehouse_id", config.warehouseId],
      ]);
    default: {
      const unreachable: never = type;
      throw new Error(`unknown data source type ${String(unreachable)}`);
    }
  }
}

async function csvProblems(
  path: string | undefined,
  csvDir: string | undefined,
): Promise<SourceAccessProblem[]> {
  if (path === undefined) return []; // the parser reports the missing field
  if (csvDir === undefined) return [{ field: "path", message: csvDisabled }];
  const check = await checkCsvPath(csvDir, path);
  return check.ok ? [] : [{ field: "path", message: `csv path ${check.problem}` }];
}

export const csvDisabled = "csv sources are not enabled on this server (MATOOLKIT_CSV_DIR is not set)";

function envProblems(
  fields: readonly (readonly ["connection" | "warehouse_id", string | undefined])[],
): SourceAccessProblem[] {
  const problems: SourceAccessProblem[] = [];
  for (const [field, name] of fields) {
    const problem = name === undefined ? undefined : sourceEnvVarProblem(name);
    if (problem !== undefined) problems.push({ field, message: `environment variable ${name} ${problem}` });
  }
  return problems;
}

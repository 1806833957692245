import type { DataSourceType } from "./model.ts";
import { dataSourceTypes } from "./model.ts";
import type { Finding } from "./problems.ts";
import type { RawMapping } from "./raw.ts";
import { isMapping } from "./raw.ts";

type LocationField = "connection" | "warehouse_id" | "query" | "path";

/** Which location fields each source type needs; any other location field would be silently ignored. */
const FIELDS_BY_TYPE: Record<DataSourceType, { required: LocationField[]; allowed: LocationField[] }> = {
  dataverse: { required: ["connection", "query"], allowed: ["connection", "query"] },
  databricks: {
    required: ["connection", "warehouse_id", "query"],
    allowed: ["connection", "warehouse_id", "query"],
  },
  // Local runs may default to the application's own database, so connection is optional.
  postgres: { required: ["query"], allowed: ["connection", "query"] },
  csv: { required: ["path"], allowed: ["path"] },
};
const LOCATION_FIELDS: LocationField[] = ["connection", "warehouse_id", "query", "path"];

function isDataSourceType(value: unknown): value is DataSourceType {
  return dataSourceTypes.some((type) => type === value);
}

function batchTimeFindings(source: RawMapping): Finding[] {
  const hasColumn = source.batch_time_column !== undefined;
  const hasImmediate = source.batch_time !== undefined;
  if (hasColumn && hasImmediate) {
    return [
      {
        path: ["data_source", "batch_time"],
        anchor: "key",
        message: "batch_time_column and batch_time are mutually exclusive; set exactly one",
      },
    ];
  }
  if (!hasColumn && !hasImmediate) {
    return [
      {
        path: ["data_source", "batch_time_column"],
        message: 'missing batch timing: set exactly one of batch_time_column or "batch_time: immediate"',
      },
    ];
  }
  return [];
}

function locationFindings(source: RawMapping): Finding[] {
  if (!isDataSourceType(source.type)) return []; // zod reports the bad type with the allowed values
  const type = source.type;
  const { required, allowed } = FIELDS_BY_TYPE[type];
  const findings: Finding[] = [];
  for (const field of LOCATION_FIELDS) {
    const present = source[field] !== undefined;
    if (!present && required.includes(field)) {
      findings.push({
        path: ["data_source", field],
        message: `missing required field "${field}" (required for type ${type})`,
      });
    } else if (present && !allowed.includes(field)) {
      findings.push({
        path: ["data_source", field],
        anchor: "key",
        message: `"${field}" is not used by type ${type}; fields for ${type}: ${allowed.join(", ")}`,
      });
    }
  }
  return findings;
}

export function dataSourceFindings(root: RawMapping): Finding[] {
  const source = root.data_source;
  if (!isMapping(source)) return [];
  return [...batchTimeFindings(source), ...locationFindings(source)];
}

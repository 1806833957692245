import { z } from "zod";
import { count, id, jsonObject, nullableTimestamp, timestamp } from "../openapi/wire-types.ts";

/** Response bodies of the runbook and automation routes (the OpenAPI document's components). */
export const runbookSchema = z
  .object({
    id,
    name: z.string(),
    version: z.int().min(1),
    isActive: z.boolean().meta({ description: "At most one version per name is active" }),
    overdueBehavior: z.enum(["rerun", "ignore"]),
    rerunInit: z.boolean(),
    createdAt: timestamp,
    lastError: z
      .string()
      .nullable()
      .meta({ description: "The scheduler's last error for this runbook (reason code: message), if any" }),
    lastErrorAt: nullableTimestamp,
  })
  .meta({ id: "Runbook", description: "One published runbook version, without its YAML" });

export const runbookWithYamlSchema = runbookSchema
  .extend({ yamlContent: z.string() })
  .meta({ id: "RunbookWithYaml", description: "One published runbook version with its YAML" });

export const automationSettingsSchema = z
  .object({
    runbookName: z.string(),
    automationEnabled: z.boolean().meta({ description: "Never switched on counts as off" }),
    enabledAt: nullableTimestamp,
    enabledBy: z.string().nullable(),
    disabledAt: nullableTimestamp,
    disabledBy: z.string().nullable(),
  })
  .meta({ id: "AutomationSettings" });

export const queryPreviewSchema = z
  .object({
    runbookName: z.string(),
    runbookVersion: z.int().min(1),
    automationEnabled: z.boolean(),
    limit: z.int().min(1),
    rows: z
      .array(jsonObject)
      .meta({ description: "The first `limit` rows as members' data would hold them" }),
    batches: z.array(
      z.object({
        batchStartTime: z.iso.datetime({ offset: true }),
        memberCount: count,
        batchId: id.nullable().meta({ description: "The existing batch; null for one a tick would create" }),
        batchStatus: z.string().nullable(),
      }),
    ),
    rowsInManualBatches: count.meta({
      description: "Immediate mode: rows left out because their key is in a manual batch",
    }),
  })
  .meta({
    id: "QueryPreview",
    description: "What the scheduler would do with the source's rows; nothing is written",
  });

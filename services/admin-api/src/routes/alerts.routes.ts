import { listAlerts } from "@matoolkit/db";
import {
  alertConditionIds,
  alertDefinition,
  alertSeverities,
  type AlertConditionId,
} from "@matoolkit/domain";
import { z } from "zod";
import { wholeNumber } from "../http/params.ts";
import { defineOperation } from "../openapi/operation.ts";
import { id, jsonObject, nullableTimestamp, timestamp } from "../openapi/wire-types.ts";

export const alertSchema = z
  .object({
    id,
    condition: z.enum(alertConditionIds),
    severity: z.enum(alertSeverities),
    summary: z.string().meta({ description: "The condition's one-line summary" }),
    subject: z.string().meta({
      description:
        "What it is about: runbook:<name>, batch:<id>, phase:<id>, pool:<workerId>, subscription:<topic>/<name>",
    }),
    runbookName: z.string().nullable(),
    batchId: id.nullable(),
    details: jsonObject.meta({ description: "Counts, reason codes and ids; never member data" }),
    raisedAt: timestamp,
    resolvedAt: nullableTimestamp.meta({ description: "Null while open" }),
  })
  .meta({ id: "Alert" });

/**
 * The alerts the scheduler's evaluator raised (issue 31; docs/observability.md "Alerts"), newest
 * first. Access `read`: an alert carries ids, counts and reason codes, what a Reader already sees
 * on the batches and runbooks it is about.
 */
export const alertOperations = [
  defineOperation({
    method: "get",
    path: "/api/alerts",
    operationId: "listAlerts",
    tag: "alerts",
    summary: "The open alerts (or every alert), newest first",
    description:
      "Raised and resolved by the system itself (a failing data source, dead letters, steps past " +
      "their timeout, throttling, a phase due but not dispatched, a failed batch). Each occurrence is " +
      "raised once and resolved once, with `alert.raised` / `alert.resolved` webhook events.",
    access: "read",
    query: z.object({
      state: z
        .enum(["open", "all"])
        .default("open")
        .meta({ description: "`open` (default): not yet resolved; `all`: resolved ones too" }),
      limit: wholeNumber(1, 1000).default(200).meta({ description: "At most this many" }),
    }),
    responses: { 200: { description: "Alerts, newest first", schema: z.array(alertSchema) } },
  }).handle(async ({ query, deps }) => {
    const rows = await listAlerts(deps.db, { state: query.state, limit: query.limit });
    const body = rows.map((row) => ({
      id: row.id,
      condition: row.conditionId as AlertConditionId,
      severity: row.severity,
      summary: alertDefinition(row.conditionId as AlertConditionId).summary,
      subject: row.subject,
      runbookName: row.runbookName,
      batchId: row.batchId,
      details: row.details,
      raisedAt: row.raisedAt,
      resolvedAt: row.resolvedAt,
    }));
    return { status: 200, body };
  }),
];

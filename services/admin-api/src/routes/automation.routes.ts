import { DataSourceError } from "@matoolkit/datasources";
import { getActiveRunbook, getAutomationSettings, type Db } from "@matoolkit/db";
import { previewRunbookQuery, SourceRowError } from "@matoolkit/commands";
import { z } from "zod";
import { setAutomationCommand } from "../commands/set-automation.ts";
import { ApiError, notFound } from "../http/api-error.ts";
import { textParam, wholeNumber } from "../http/params.ts";
import { defineOperation } from "../openapi/operation.ts";
import { runbookSecretPolicy } from "../read-models/batch-secrets.ts";
import { maskSourceRow } from "../read-models/mask-rows.ts";
import { automationSettingsSchema, queryPreviewSchema } from "../read-models/runbook-schemas.ts";

// Strict: `{ "automationEnabled": true }` or `{ "enable": true }` must not silently do nothing.
export const automationRequestSchema = z.strictObject({ enabled: z.boolean() });

const PREVIEW_LIMIT = { default: 20, max: 500 } as const;
const nameParam = z.object({ name: textParam.meta({ description: "Runbook name" }) });

/**
 * 000 "Admin API Internals": automation status (any caller), the switch and the query preview
 * (Admin). The switch records who flipped it and when (000 "Audit Trail").
 */
export const automationOperations = [
  defineOperation({
    method: "get",
    path: "/api/runbooks/{name}/automation",
    operationId: "getAutomation",
    tag: "automation",
    summary: "Whether the scheduler creates batches for a runbook automatically",
    access: "read",
    params: nameParam,
    errors: ["resource.not_found"],
    responses: {
      200: { description: "The switch and who flipped it last", schema: automationSettingsSchema },
    },
  }).handle(async ({ params, deps }) => {
    const name = await existingRunbookName(deps.db, params.name);
    return { status: 200, body: presentSettings(name, await getAutomationSettings(deps.db, name)) };
  }),

  defineOperation({
    method: "put",
    path: "/api/runbooks/{name}/automation",
    operationId: "setAutomation",
    tag: "automation",
    summary: "Switch automation on or off",
    description:
      "Off stops new batches only: running batches keep being synced and their phases keep falling due.",
    access: "Admin",
    params: nameParam,
    body: {
      content: { "application/json": automationRequestSchema },
      limit: "16kb",
      invalid: 'Send JSON { "enabled": true } or { "enabled": false }',
    },
    errors: ["resource.not_found"],
    responses: { 200: { description: "The switch after the change", schema: automationSettingsSchema } },
  }).handle(async ({ params, body, principal, deps }) => {
    const settings = await setAutomationCommand(deps.db, {
      runbookName: params.name,
      enabled: body.enabled,
      actor: principal.identity,
    });
    return { status: 200, body: presentSettings(params.name, settings) };
  }),

  // POST: it runs a query against the source (not a cacheable read), and it is Admin-only
  // because it shows members' data.
  defineOperation({
    method: "post",
    path: "/api/runbooks/{name}/query/preview",
    operationId: "previewRunbookQuery",
    tag: "automation",
    summary: "Run the runbook's data source query and show what a scheduler tick would do",
    description: "Nothing is written. Shows members' data, hence Admin only.",
    access: "Admin",
    // Writes nothing, and its answer (members' data) is not worth keeping for a replay.
    acceptsIdempotencyKey: false,
    params: nameParam,
    query: z.object({
      limit: wholeNumber(1, PREVIEW_LIMIT.max)
        .default(PREVIEW_LIMIT.default)
        .meta({ description: "How many source rows to read" }),
    }),
    errors: ["resource.not_found", "datasource.failed", ["member_data.invalid", 422]],
    responses: {
      200: { description: "The rows and the batches they would form", schema: queryPreviewSchema },
    },
  }).handle(async ({ params, query, deps }) => {
    const preview = await previewRunbookQuery(deps, params.name, {
      limit: query.limit,
      now: new Date(),
    }).catch((error: unknown) => {
      throw previewError(error);
    });
    if (preview === undefined) throw notFound(`no active runbook named '${params.name}'`);
    // Members' data with secrets masked, as on every read (issue 25), Admin included.
    const policy = await runbookSecretPolicy(deps.db, preview.runbookName);
    return { status: 200, body: { ...preview, rows: preview.rows.map((row) => maskSourceRow(policy, row)) } };
  }),
];

async function existingRunbookName(db: Db, name: string): Promise<string> {
  if ((await getActiveRunbook(db, name)) === undefined) throw notFound(`no active runbook named '${name}'`);
  return name;
}

/** Never configured = disabled (000's column default), with nobody recorded. */
function presentSettings(
  runbookName: string,
  settings: Awaited<ReturnType<typeof getAutomationSettings>>,
): z.output<typeof automationSettingsSchema> {
  return {
    runbookName,
    automationEnabled: settings?.automationEnabled ?? false,
    enabledAt: settings?.enabledAt ?? null,
    enabledBy: settings?.enabledBy ?? null,
    disabledAt: settings?.disabledAt ?? null,
    disabledBy: settings?.disabledBy ?? null,
  };
}

/** A source that fails is the source's problem (502), a row the scheduler cannot use the data's (422). */
function previewError(error: unknown): unknown {
  if (error instanceof DataSourceError) return new ApiError(502, "datasource.failed", error.message);
  if (error instanceof SourceRowError) return new ApiError(422, "member_data.invalid", error.message);
  return error;
}

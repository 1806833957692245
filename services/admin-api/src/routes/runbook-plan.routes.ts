import { z } from "zod";
import { CsvUpload } from "../csv/csv-upload.ts";
import { positiveId, textParam, wholeNumber } from "../http/params.ts";
import { MEMBER_UPLOAD_LIMIT, rowLimitOf } from "../http/request-limits.ts";
import { defineOperation } from "../openapi/operation.ts";
import { planRunbook } from "../read-models/runbook-plan.ts";
import { runbookPlanSchema } from "../read-models/runbook-plan-schemas.ts";

const PLAN_LIMIT = { default: 100, max: 1000 } as const;
const csvBody = z.string().refine((text) => text.trim() !== "", "the CSV is empty");
// Strict and explicit: a forgotten CSV must not silently turn into a query against the source.
const sourceBody = z.strictObject({
  source: z.literal(true).meta({ description: "Plan the rows of the runbook's data source" }),
});

/** Issue 12: what a batch would run, member by member and step by step, without running anything. */
export const runbookPlanOperations = [
  // POST: it may run the data source query (not a cacheable read). Operator (Admin too): it
  // shows resolved parameters, i.e. member data, and costs source queries.
  defineOperation({
    method: "post",
    path: "/api/runbooks/{name}/plan",
    operationId: "planRunbook",
    tag: "runbooks",
    summary: "Dry run: every member's steps with resolved function names and parameters",
    description:
      "Members from a CSV body (as for POST /api/batches: a manual batch, no due times) or, with " +
      'JSON `{"source": true}`, from the runbook\'s data source (batch time from its batch_time_column, ' +
      "or now for immediate batching). Each step shows its function and parameters resolved as the " +
      "orchestrator would resolve them (secret-looking values masked), the templates that would not " +
      "resolve, and those only known at run time (`_batch_id`, worker outputs of earlier steps). " +
      "Nothing is written.",
    access: "Operator",
    // Writes nothing; its answer can be large and is not worth keeping for a replay.
    acceptsIdempotencyKey: false,
    params: z.object({ name: textParam.meta({ description: "Runbook name" }) }),
    query: z.strictObject({
      version: positiveId.optional().meta({ description: "Version (default: the active version)" }),
      limit: wholeNumber(1, PLAN_LIMIT.max)
        .default(PLAN_LIMIT.default)
        .meta({ description: "At most this many members are listed (and source rows planned)" }),
    }),
    body: {
      content: { "text/csv": csvBody, "text/plain": csvBody, "application/json": sourceBody },
      // A whole wave of members in one upload: the configured limit (http/request-limits.ts).
      limit: MEMBER_UPLOAD_LIMIT,
      upload: true,
      invalid:
        'send the members as a CSV body (Content-Type: text/csv), or JSON {"source": true} to plan the runbook\'s data source rows',
      description: 'A member CSV (header row with the runbook\'s columns), or {"source": true}',
    },
    errors: [
      "resource.not_found",
      ["member_data.invalid", 400],
      ["member_data.invalid", 422],
      "member_data.too_many_rows",
      "datasource.failed",
      "request.too_many_in_flight",
    ],
    responses: { 200: { description: "The plan", schema: runbookPlanSchema } },
  }).handle(async ({ params, query, body, deps }) => ({
    status: 200,
    body: await planRunbook(deps, {
      name: params.name,
      version: query.version,
      input: body instanceof CsvUpload ? { csv: body } : { source: true },
      limit: query.limit,
      rowLimit: rowLimitOf(deps.requestLimits, "POST /api/runbooks/{name}/plan"),
      now: new Date(),
    }),
  })),
];

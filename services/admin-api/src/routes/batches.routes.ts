import { countMembersByStatusOfBatches, listBatches } from "@matoolkit/db";
import { batchMachine } from "@matoolkit/domain";
import { z } from "zod";
import { advanceBatchCommand } from "../commands/advance-batch.ts";
import { cancelBatchCommand } from "../commands/cancel-batch.ts";
import { createManualBatchCommand } from "../commands/create-manual-batch.ts";
import { notFound } from "../http/api-error.ts";
import { externalRefDescription, externalRefParam } from "../http/external-ref-param.ts";
import {
  MAX_SQL_INTEGER,
  nonEmptyText,
  oneOf,
  pageQuery,
  positiveId,
  timestampParam,
  wholeNumber,
} from "../http/params.ts";
import { MEMBER_UPLOAD_LIMIT, rowLimitOf } from "../http/request-limits.ts";
import { defineOperation } from "../openapi/operation.ts";
import {
  batchDetail,
  eventPage,
  executionsWithRollbacks,
  memberPage,
  phasesWithCounts,
} from "../read-models/batch-read-models.ts";
import {
  advanceResultSchema,
  batchDetailSchema,
  batchExecutionsSchema,
  batchListItemSchema,
  batchMemberSchema,
  cancelResultSchema,
  createdBatchSchema,
  eventPageSchema,
  phaseExecutionSchema,
} from "../read-models/batch-schemas.ts";

const batchId = z.object({ id: positiveId.meta({ description: "Batch id" }) });
const csvBody = z.string().refine((text) => text.trim() !== "", "the CSV is empty");

/** 000 "Admin API Internals": manual batches, their control, and what every batch did. */
export const batchOperations = [
  defineOperation({
    method: "post",
    path: "/api/batches",
    operationId: "createBatch",
    tag: "batches",
    summary: "Create a manual batch from a CSV of members",
    description:
      "The batch starts `detected` with its members and phases (no due times); advance it with " +
      "POST /api/batches/{id}/advance. CSV problems are listed with their line, never their values. " +
      "The same CSV (line endings aside) for the same runbook within minutes of a batch that is " +
      "not cancelled is refused as a double submit (409 `batch.duplicate`, `existingBatchId`) " +
      "unless `allowDuplicate=true`.",
    access: "Admin",
    query: z.object({
      runbook: nonEmptyText.meta({ description: "The runbook name" }),
      allowDuplicate: z
        .stringbool({ truthy: ["true"], falsy: ["false"], error: "must be true or false" })
        .default(false)
        .meta({ description: "Create the batch even if the same CSV was just uploaded for this runbook" }),
      externalRef: externalRefParam.optional().meta({
        description:
          `${externalRefDescription}. Without it, a runbook with data_source.external_ref_column ` +
          "takes the first member's non-empty value of that column",
      }),
    }),
    body: {
      content: { "text/csv": csvBody, "text/plain": csvBody },
      // A whole wave of members in one upload: the configured limit (http/request-limits.ts).
      limit: MEMBER_UPLOAD_LIMIT,
      upload: true,
      invalid: "send the members as a CSV body with Content-Type: text/csv",
      description: "A header row with the runbook's columns, then one member per line",
    },
    errors: [
      "resource.not_found",
      ["member_data.invalid", 400],
      "member_data.too_many_rows",
      "batch.duplicate",
      "request.too_many_in_flight",
    ],
    responses: { 201: { description: "The new batch", schema: createdBatchSchema } },
  }).handle(async ({ query, body, principal, deps }) => {
    const { batch, memberCount } = await createManualBatchCommand(deps.db, {
      runbookName: query.runbook,
      csv: body,
      createdBy: principal.identity,
      externalRef: query.externalRef,
      duplicateWindowMinutes: deps.duplicateBatchWindowMinutes,
      allowDuplicate: query.allowDuplicate,
      rowLimit: rowLimitOf(deps.requestLimits, "POST /api/batches"),
    });
    return { status: 201, body: { ...batch, runbookName: query.runbook, memberCount } };
  }),

  defineOperation({
    method: "post",
    path: "/api/batches/{id}/advance",
    operationId: "advanceBatch",
    tag: "batches",
    summary: "Advance a manual batch: dispatch its init steps, else its next phase",
    access: "Operator",
    params: batchId,
    errors: ["resource.not_found", "state.conflict"],
    responses: { 202: { description: "Dispatched", schema: advanceResultSchema } },
  }).handle(async ({ params, principal, deps }) => ({
    status: 202,
    body: await advanceBatchCommand(deps.db, params.id, principal.identity),
  })),

  defineOperation({
    method: "post",
    path: "/api/batches/{id}/cancel",
    operationId: "cancelBatch",
    tag: "batches",
    summary: "Cancel a running batch with its open phases and steps",
    access: "Operator",
    params: batchId,
    errors: ["resource.not_found", "state.conflict"],
    responses: { 200: { description: "Cancelled", schema: cancelResultSchema } },
  }).handle(async ({ params, principal, deps }) => ({
    status: 200,
    body: await cancelBatchCommand(deps.db, params.id, principal.identity),
  })),

  defineOperation({
    method: "get",
    path: "/api/batches",
    operationId: "listBatches",
    tag: "batches",
    summary: "List batches, newest first",
    description:
      "Filters combine (all must hold). `createdAfter` is inclusive and `createdBefore` exclusive, " +
      "both on the batch's creation time (detectedAt); `createdBy` and `externalRef` match exactly.",
    access: "read",
    query: z.object({
      status: oneOf(batchMachine.states).optional(),
      runbook: nonEmptyText.optional().meta({ description: "Only this runbook's batches" }),
      createdBy: nonEmptyText
        .optional()
        .meta({ description: "Only batches this operator created (their identity, as in createdBy)" }),
      createdAfter: timestampParam
        .optional()
        .meta({ description: "Only batches created at or after this time (ISO 8601 with a time zone)" }),
      createdBefore: timestampParam
        .optional()
        .meta({ description: "Only batches created before this time (ISO 8601 with a time zone)" }),
      externalRef: externalRefParam.optional().meta({ description: "Only batches with this reference" }),
      ...pageQuery({ limit: 100, max: 1000 }),
    }),
    responses: { 200: { description: "A page of batches", schema: z.array(batchListItemSchema) } },
  }).handle(async ({ query, deps }) => {
    const batches = await listBatches(deps.db, {
      status: query.status,
      runbookName: query.runbook,
      createdBy: query.createdBy,
      createdAfter: dateOf(query.createdAfter),
      createdBefore: dateOf(query.createdBefore),
      externalRef: query.externalRef,
      limit: query.limit,
      offset: query.offset,
    });
    // One statement for the page's counts (a list showing N batches would otherwise make N
    // requests). Members only: the phase counts aggregate every step and stay on GET /{id}.
    const counts = await countMembersByStatusOfBatches(
      deps.db,
      batches.map((batch) => batch.id),
    );
    return {
      status: 200,
      body: batches.map((batch) => ({ ...batch, memberCounts: counts.get(batch.id)! })),
    };
  }),

  defineOperation({
    method: "get",
    path: "/api/batches/{id}",
    operationId: "getBatch",
    tag: "batches",
    summary: "Get a batch with member counts by status and a summary of each phase",
    access: "read",
    params: batchId,
    errors: ["resource.not_found"],
    responses: { 200: { description: "The batch, without its runbook YAML", schema: batchDetailSchema } },
  }).handle(async ({ params, deps }) => ({
    status: 200,
    body: found(params.id, await batchDetail(deps.db, params.id)),
  })),

  // A bare array, as before paging existed: without `limit` it is every member (older callers);
  // with it, a page, and the next page's address is in the Link header (RFC 8288), so the body's
  // shape never depends on the query.
  defineOperation({
    method: "get",
    path: "/api/batches/{id}/members",
    operationId: "listBatchMembers",
    tag: "batches",
    summary: "List a batch's members with their data, in id order (all, or a page)",
    description:
      "Without `limit`, every member (after `afterId` when given). With `limit`, at most that many: " +
      "when more follow, the response has a `Link: </api/batches/{id}/members?afterId=…&limit=…>; " +
      'rel="next"` header, the next page\'s address (the same `limit`, `afterId` = the last id of ' +
      "this page); no Link header means this page reached the end.",
    access: "read",
    params: batchId,
    query: z.object({
      afterId: wholeNumber(0, MAX_SQL_INTEGER)
        .optional()
        .meta({ description: "The last member id already seen: only members with a larger id" }),
      limit: wholeNumber(1, 1000)
        .optional()
        .meta({ description: "At most this many (a page); every member when absent" }),
    }),
    errors: ["resource.not_found"],
    responses: {
      200: {
        description: "Every member, or a page of them",
        schema: z.array(batchMemberSchema),
        headers: {
          Link: {
            description: 'With `limit`, when another page follows: `<next page URL>; rel="next"`',
            schema: z.string(),
          },
        },
      },
    },
  }).handle(async ({ params, query, deps }) => {
    const page = found(params.id, await memberPage(deps.db, params.id, query));
    if (page.nextAfterId === null) return { status: 200, body: page.items };
    const next = `/api/batches/${params.id}/members?afterId=${page.nextAfterId}&limit=${query.limit}`;
    return { status: 200, body: page.items, headers: { Link: `<${next}>; rel="next"` } };
  }),

  defineOperation({
    method: "get",
    path: "/api/batches/{id}/phases",
    operationId: "listBatchPhases",
    tag: "batches",
    summary: "List a batch's phase executions in runbook order, with member counts",
    access: "read",
    params: batchId,
    errors: ["resource.not_found"],
    responses: { 200: { description: "Every phase execution", schema: z.array(phaseExecutionSchema) } },
  }).handle(async ({ params, deps }) => ({
    status: 200,
    body: found(params.id, await phasesWithCounts(deps.db, params.id)),
  })),

  // Init executions first (they run before any phase), then the page of step executions.
  defineOperation({
    method: "get",
    path: "/api/batches/{id}/steps",
    operationId: "listBatchSteps",
    tag: "batches",
    summary: "List a batch's init executions and a page of its step executions",
    access: "read",
    params: batchId,
    query: z.object(pageQuery({ limit: 500, max: 5000 })),
    errors: ["resource.not_found"],
    responses: { 200: { description: "Executions with their rollbacks", schema: batchExecutionsSchema } },
  }).handle(async ({ params, query, deps }) => ({
    status: 200,
    body: found(params.id, await executionsWithRollbacks(deps.db, params.id, query)),
  })),

  // The batch's timeline, oldest first; a client pages (or polls) with the last id it has seen.
  defineOperation({
    method: "get",
    path: "/api/batches/{id}/events",
    operationId: "listBatchEvents",
    tag: "batches",
    summary: "Page through a batch's status changes, oldest first",
    access: "read",
    params: batchId,
    query: z.object({
      afterId: wholeNumber(0, Number.MAX_SAFE_INTEGER)
        .optional()
        .meta({ description: "The last event id already seen" }),
      limit: wholeNumber(1, 1000).default(100).meta({ description: "How many to return" }),
    }),
    errors: ["resource.not_found"],
    responses: { 200: { description: "A page of events", schema: eventPageSchema } },
  }).handle(async ({ params, query, deps }) => ({
    status: 200,
    body: found(params.id, await eventPage(deps.db, params.id, query)),
  })),
];

function dateOf(text: string | undefined): Date | undefined {
  return text === undefined ? undefined : new Date(text);
}

/** The read models answer undefined for a batch that does not exist. */
function found<T>(id: number, body: T | undefined): T {
  if (body === undefined) throw notFound(`batch ${id} does not exist`);
  return body;
}

import { memberMachine } from "@matoolkit/domain";
import { z } from "zod";
import { addBatchMembersCommand } from "../commands/add-batch-members.ts";
import { removeBatchMemberCommand } from "../commands/remove-batch-member.ts";
import { CsvUpload } from "../csv/csv-upload.ts";
import type { MemberUpload } from "../csv/member-upload.ts";
import { positiveId } from "../http/params.ts";
import { MEMBER_UPLOAD_LIMIT, rowLimitOf } from "../http/request-limits.ts";
import { defineOperation } from "../openapi/operation.ts";
import { id, nullableTimestamp, timestamp } from "../openapi/wire-types.ts";

const batchId = positiveId.meta({ description: "Batch id" });

/** A cell: text as in a CSV, or a list for a multi-valued column. */
export const memberValueSchema = z.union([
  z.string(),
  z.number(),
  z.boolean(),
  z.null(),
  z.array(z.union([z.string(), z.number(), z.boolean()])),
]);

/**
 * `application/json` body: `{ "members": [ { "<column>": value, … }, … ] }`, one object per
 * member keyed by column name, as a CSV row would be (the runbook's primary key required).
 */
export const addMembersJsonBodySchema = z
  .strictObject({
    members: z.array(z.record(z.string(), memberValueSchema)).min(1, "at least one member is required"),
  })
  .meta({ id: "NewMembers", description: "One object per member: column name → value" });

/** `text/csv` body: the same CSV as POST /api/batches (header row, one member per line). */
export const addMembersCsvBodySchema = z
  .string()
  .refine((text) => text.trim() !== "", "the CSV body is empty; send a header row and one member per line")
  .meta({ description: "CSV with a header row" });

export const addedMemberSchema = z
  .object({ id, memberKey: z.string(), status: z.enum(memberMachine.states), addedAt: timestamp })
  .meta({ id: "AddedMember" });

/** 201: the members added, with the ids later requests (DELETE …/members/{memberId}) take. */
export const addMembersResponseSchema = z
  .object({ batchId: id, members: z.array(addedMemberSchema) })
  .meta({ id: "AddedMembers" });

/** 200: the member is removed (now, or already before: alreadyRemoved). */
export const removeMemberResponseSchema = z
  .object({
    batchId: id,
    memberId: id,
    status: z.literal("removed"),
    removedAt: nullableTimestamp,
    alreadyRemoved: z
      .boolean()
      .meta({ description: "True when it was removed before this request: nothing was done" }),
  })
  .meta({ id: "RemovedMember" });

/**
 * 000 "Add members from CSV" and "Member Removal Protocol": late joiners and leavers of a running
 * manual batch (see the commands for the rules and why automated batches are refused).
 */
export const batchMemberOperations = [
  defineOperation({
    method: "post",
    path: "/api/batches/{id}/members",
    operationId: "addBatchMembers",
    tag: "batches",
    summary: "Add members to a running manual batch (CSV or JSON)",
    description:
      "The members catch up on the phases already dispatched (000 Member Catch-Up Protocol). " +
      "Rows are checked against the runbook version the batch runs; nothing is written unless " +
      "every row is valid and no key is already in the batch. Problems name lines or JSON paths, " +
      "never values.",
    access: "Operator",
    params: z.object({ id: batchId }),
    body: {
      content: {
        "text/csv": addMembersCsvBodySchema,
        "text/plain": addMembersCsvBodySchema,
        "application/json": addMembersJsonBodySchema,
      },
      // A whole wave of members in one upload: the configured limit (http/request-limits.ts).
      limit: MEMBER_UPLOAD_LIMIT,
      upload: true,
      invalid:
        "send the members as a CSV body with Content-Type: text/csv, or as JSON " +
        "{ members: [ { column: value } ] } with Content-Type: application/json",
      description: "The same CSV as POST /api/batches (a header row, one member per line), or JSON rows",
    },
    errors: [
      "resource.not_found",
      "state.conflict",
      ["member_data.invalid", 400],
      "member_data.too_many_rows",
      "request.too_many_in_flight",
    ],
    responses: { 201: { description: "The members added", schema: addMembersResponseSchema } },
  }).handle(async ({ params, body, principal, deps }) => ({
    status: 201,
    body: await addBatchMembersCommand(
      deps.db,
      params.id,
      memberUploadOf(body),
      principal.identity,
      rowLimitOf(deps.requestLimits, "POST /api/batches/{id}/members"),
    ),
  })),

  defineOperation({
    method: "delete",
    path: "/api/batches/{id}/members/{memberId}",
    operationId: "removeBatchMember",
    tag: "batches",
    summary: "Remove a member from a running manual batch",
    description:
      "Its open steps are cancelled and the runbook's on_member_removed steps sent. Repeating " +
      "the request answers 200 with alreadyRemoved and sends nothing more.",
    access: "Operator",
    params: z.object({
      id: batchId,
      memberId: positiveId.meta({ description: "Member id (batch_members.id, from GET …/members)" }),
    }),
    errors: ["resource.not_found", "state.conflict"],
    responses: { 200: { description: "The member is removed", schema: removeMemberResponseSchema } },
  }).handle(async ({ params, principal, deps }) => ({
    status: 200,
    body: await removeBatchMemberCommand(deps.db, params.id, params.memberId, principal.identity),
  })),
];

/** The parsed body (text is a CSV, an object the JSON rows) as the command takes it. */
function memberUploadOf(body: CsvUpload | z.output<typeof addMembersJsonBodySchema>): MemberUpload {
  return body instanceof CsvUpload ? { format: "csv", upload: body } : { format: "json", rows: body.members };
}

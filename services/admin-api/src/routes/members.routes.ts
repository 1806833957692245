import { findMemberBatches } from "@matoolkit/db";
import { batchMachine, memberMachine } from "@matoolkit/domain";
import { z } from "zod";
import { nonEmptyText, pageQuery } from "../http/params.ts";
import { defineOperation } from "../openapi/operation.ts";
import { id, nullableTimestamp, timestamp } from "../openapi/wire-types.ts";

/** The longest key searched: member keys are UPNs, emails or ids, far below this. */
const MAX_KEY_LENGTH = 512;

export const memberBatchSchema = z
  .object({
    memberId: id.meta({ description: "The member row in that batch (GET /api/batches/{batchId}/members)" }),
    memberKey: z.string().meta({
      description:
        "The key as the batch holds it (its case may differ from the one searched). Shown to every " +
        "role, as every member read shows it: the primary key is never secret",
    }),
    memberStatus: z.enum(memberMachine.states),
    addedAt: timestamp,
    removedAt: nullableTimestamp,
    failedAt: nullableTimestamp,
    erasedAt: nullableTimestamp.meta({
      description: "When the member's personal data was erased (DELETE /api/members/{key}); null when not",
    }),
    batchId: id,
    batchStatus: z.enum(batchMachine.states),
    isManual: z.boolean(),
    externalRef: z.string().nullable(),
    batchCreatedAt: timestamp,
    runbookName: z.string(),
    runbookVersion: z.int().min(1),
  })
  .meta({ id: "MemberBatch" });

/** Issue 31: "where is user X?" across every batch. */
export const memberSearchOperations = [
  defineOperation({
    method: "get",
    path: "/api/members",
    operationId: "findMemberBatches",
    tag: "batches",
    summary: "Find every batch a member key is or was in, newest batch first",
    description:
      "Exact match on the whole key, ignoring case (`Adele@Contoso.com` finds `adele@contoso.com`); " +
      "no partial or wildcard match. One row per member row: a key removed from a batch and added " +
      "back has two. The member's data is not returned (GET /api/batches/{batchId}/members has it, " +
      "masked). The key is not logged.",
    access: "read",
    query: z.object({
      key: nonEmptyText
        .max(MAX_KEY_LENGTH, `must be at most ${MAX_KEY_LENGTH} characters`)
        .meta({ description: "The member key (the runbook's primary key value), e.g. a UPN" }),
      ...pageQuery({ limit: 100, max: 1000 }),
    }),
    responses: {
      200: { description: "A page of the key's memberships", schema: z.array(memberBatchSchema) },
    },
  }).handle(async ({ query, deps }) => ({
    status: 200,
    body: await findMemberBatches(deps.db, query.key, { limit: query.limit, offset: query.offset }),
  })),
];

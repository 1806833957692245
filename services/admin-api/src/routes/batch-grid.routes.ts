import { executionMachine, memberMachine } from "@matoolkit/domain";
import { z } from "zod";
import { notFound } from "../http/api-error.ts";
import { oneOf, pageQuery, positiveId } from "../http/params.ts";
import { defineOperation } from "../openapi/operation.ts";
import { count, id, nullableTimestamp, timestamp } from "../openapi/wire-types.ts";
import { batchGrid, batchProgress } from "../read-models/batch-grid.ts";

const batchId = z.object({ id: positiveId.meta({ description: "Batch id" }) });

const gridStepSchema = z
  .object({
    id,
    phaseName: z.string(),
    stepName: z.string(),
    status: z.enum(executionMachine.states),
    errorCode: z.string().nullable().meta({ description: "Stable reason code, e.g. graph.throttled" }),
    errorMessage: z.string().nullable().meta({ description: "The sanitized error message" }),
    retryCount: count,
    pollCount: count,
    redriveCount: count,
    completedAt: nullableTimestamp,
    itemCount: z
      .int()
      .min(1)
      .nullable()
      .meta({
        description:
          "A for_each step: how many values it has for the member (the cell shows its failed, else " +
          "running, else waiting, else done value); null on other steps and before the step's turn",
      }),
    itemsDone: count.meta({ description: "A for_each step: its values done so far (succeeded or skipped)" }),
  })
  .meta({ id: "GridStep", description: "The current run of one step of one member" });

export const batchGridSchema = z
  .object({
    batchId: id,
    memberTotal: count.meta({
      description: "The grid's rows: every member of the batch (any status), or those in `memberStatus`",
    }),
    offset: count,
    columns: z
      .array(z.object({ phaseName: z.string(), stepName: z.string() }))
      .meta({ description: "The steps of the batch's runbook version, phases and steps in runbook order" }),
    members: z.array(
      z.object({
        id,
        memberKey: z.string(),
        status: z.enum(memberMachine.states),
        failedAt: nullableTimestamp,
        steps: z.array(gridStepSchema).meta({
          description: "Only the steps that exist yet (a phase creates them when it is dispatched)",
        }),
      }),
    ),
  })
  .meta({ id: "BatchGrid" });

export const batchProgressSchema = z
  .object({
    batchId: id,
    memberTotal: count.meta({ description: "Members not removed" }),
    points: z.array(
      z.object({
        at: timestamp.meta({ description: "A second in which members finished" }),
        succeeded: count.meta({ description: "Members through every step by then" }),
        failed: count.meta({ description: "Members failed by then" }),
      }),
    ),
  })
  .meta({ id: "BatchProgress" });

/**
 * Issue 13: the reads a status grid and a progress chart need without fetching every step of a
 * large batch: a page of members with their steps (random access by offset, for a virtualised
 * grid), and members finished over time. Public, documented reads any client may use.
 */
export const batchGridOperations = [
  defineOperation({
    method: "get",
    path: "/api/batches/{id}/grid",
    operationId: "getBatchGrid",
    tag: "batches",
    summary: "A page of a batch's members (id order) with the current run of each of their steps",
    description:
      "For a member × step status grid: `columns` are the runbook version's steps in order, `members` " +
      "the page (`offset`, `limit`), each with its existing steps (status, reason code, sanitized " +
      "error, retry, poll and redrive counts); `memberTotal` is the number of rows. `memberStatus` " +
      "keeps only the members in that status (e.g. the failed ones of a large batch).",
    access: "read",
    params: batchId,
    query: z.object({
      memberStatus: oneOf(memberMachine.states)
        .optional()
        .meta({ description: "Only members in this status; offsets count within them" }),
      ...pageQuery({ limit: 100, max: 1000 }),
    }),
    errors: ["resource.not_found"],
    responses: { 200: { description: "A page of the grid", schema: batchGridSchema } },
  }).handle(async ({ params, query, deps }) => ({
    status: 200,
    body: found(
      params.id,
      await batchGrid(deps.db, params.id, { offset: query.offset, limit: query.limit }, query.memberStatus),
    ),
  })),

  defineOperation({
    method: "get",
    path: "/api/batches/{id}/progress",
    operationId: "getBatchProgress",
    tag: "batches",
    summary: "Members finished over time: cumulative succeeded and failed counts per second",
    description:
      "A member has succeeded once every step of its runbook version succeeded (at its last step's " +
      "completion) and failed at its failure; removed members never finish. One point per second " +
      "in which some member finished, oldest first.",
    access: "read",
    params: batchId,
    errors: ["resource.not_found"],
    responses: { 200: { description: "The progress series", schema: batchProgressSchema } },
  }).handle(async ({ params, deps }) => ({
    status: 200,
    body: found(params.id, await batchProgress(deps.db, params.id)),
  })),
];

function found<T>(batch: number, body: T | undefined): T {
  if (body === undefined) throw notFound(`batch ${batch} does not exist`);
  return body;
}

import { z } from "zod";
import { pauseBatchCommand } from "../commands/pause-batch.ts";
import { resumeBatchCommand } from "../commands/resume-batch.ts";
import { positiveId } from "../http/params.ts";
import { defineOperation } from "../openapi/operation.ts";

const batchId = z.object({ id: positiveId.meta({ description: "Batch id" }) });
const count = z.number().int().nonnegative();

const pauseResultSchema = z
  .object({ batchId: z.number().int().positive(), status: z.literal("paused") })
  .meta({ id: "PauseResult" });

const resumeResultSchema = z
  .object({
    batchId: z.number().int().positive(),
    status: z.literal("active"),
    resent: z
      .object({ phases: count, pollChecks: count, retryChecks: count })
      .meta({ description: "What the pause held back and the resume sent again" }),
  })
  .meta({ id: "ResumeResult" });

/** Pause and resume a batch (issue 12); every transition records the caller as its actor. */
export const batchPauseOperations = [
  defineOperation({
    method: "post",
    path: "/api/batches/{id}/pause",
    operationId: "pauseBatch",
    tag: "batches",
    summary: "Pause an active batch: no new job, phase, poll or retry is sent until it is resumed",
    description:
      "Jobs already sent finish and their results are recorded (a member can still fail, a phase or " +
      "the batch can still end); the next steps wait. Member sync goes on for automated batches. " +
      "Only an `active` batch can be paused (409 otherwise).",
    access: "Operator",
    params: batchId,
    errors: ["resource.not_found", "state.conflict"],
    responses: { 200: { description: "Paused", schema: pauseResultSchema } },
  }).handle(async ({ params, principal, deps }) => ({
    status: 200,
    body: await pauseBatchCommand(deps.db, params.id, principal.identity),
  })),

  defineOperation({
    method: "post",
    path: "/api/batches/{id}/resume",
    operationId: "resumeBatch",
    tag: "batches",
    summary: "Resume a paused batch: what it held back is sent, due timers fire",
    description:
      "Phases that fell due while paused are dispatched, members whose next step waited start it, " +
      "polls and retries carry on (a retry never before its retry time). Only a `paused` batch can " +
      "be resumed (409 otherwise).",
    access: "Operator",
    params: batchId,
    errors: ["resource.not_found", "state.conflict"],
    responses: { 200: { description: "Resumed", schema: resumeResultSchema } },
  }).handle(async ({ params, principal, deps }) => ({
    status: 200,
    body: await resumeBatchCommand(deps.db, params.id, principal.identity),
  })),
];

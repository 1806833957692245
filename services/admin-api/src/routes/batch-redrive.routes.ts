import { batchMachine } from "@matoolkit/domain";
import { z } from "zod";
import { redriveBatchCommand, type RedriveTarget } from "../commands/redrive-batch.ts";
import { MAX_SQL_INTEGER, positiveId } from "../http/params.ts";
import { defineOperation } from "../openapi/operation.ts";
import { id } from "../openapi/wire-types.ts";

/** Ids in one `memberIds` request; `{"members":"failed"}` redrives any number. */
export const MAX_REDRIVE_MEMBER_IDS = 1000;

const bodyId = z
  .int("must be a positive integer")
  .min(1, `must be a positive integer (at most ${MAX_SQL_INTEGER})`)
  .max(MAX_SQL_INTEGER, `must be a positive integer (at most ${MAX_SQL_INTEGER})`);

const forms = ["members", "memberIds", "stepExecutionId", "initExecutionId"] as const;

/**
 * Exactly one of four forms. Strict, with one shape rather than a union: a misspelt field is named
 * as unknown, and a body with none or two of the forms is told which ones exist (a union would
 * answer only "invalid input").
 */
export const redriveRequestSchema = z
  .strictObject({
    members: z
      .literal("failed", 'must be "failed" (every failed member of the batch)')
      .optional()
      .meta({ description: '`"failed"`: every failed member of the batch' }),
    memberIds: z
      .array(bodyId)
      .min(1, "must list at least one member id")
      .max(MAX_REDRIVE_MEMBER_IDS, `must list at most ${MAX_REDRIVE_MEMBER_IDS} member ids`)
      .optional()
      .meta({ description: "These members, each a failed member of this batch" }),
    stepExecutionId: bodyId
      .optional()
      .meta({ description: "The member of this failed (or poll_timeout) step" }),
    initExecutionId: bodyId
      .optional()
      .meta({ description: "An init step: not supported yet, answers 409 (see the description)" }),
  })
  .superRefine((body, ctx) => {
    const given = forms.filter((form) => body[form] !== undefined);
    if (given.length === 1) return;
    ctx.addIssue({
      code: "custom",
      message:
        given.length === 0
          ? `give one of ${forms.slice(0, -1).join(", ")} or ${forms.at(-1)}`
          : `give only one of ${forms.join(", ")}, not ${given.join(" and ")}`,
    });
  })
  .meta({ id: "RedriveRequest" });

export const redriveResultSchema = z
  .object({
    batchId: id,
    batchStatus: z.enum(batchMachine.states).meta({
      description: "`active` (reopened if it had ended), or `paused`: nothing is sent until resume",
    }),
    redriven: z.array(
      z.object({
        memberId: id,
        steps: z.array(
          z.object({
            id,
            phaseExecutionId: id,
            stepName: z.string(),
            jobId: z.string().meta({ description: "The job id of its next run: `step-{id}-redrive-{n}`" }),
          }),
        ),
      }),
    ),
  })
  .meta({ id: "RedriveResult" });

/** Issue 12: failed members run again from their point of failure. */
export const batchRedriveOperations = [
  defineOperation({
    method: "post",
    path: "/api/batches/{id}/redrive",
    operationId: "redriveBatch",
    tag: "batches",
    summary: "Redrive failed members: their failed steps run again with new job ids",
    description:
      'Body: `{"members":"failed"}` (every failed member), `{"memberIds":[…]}` (1-1000 failed ' +
      'members of this batch) or `{"stepExecutionId":n}` (the member of a failed or poll_timeout ' +
      "step). Each member becomes `active`; its failed, timed-out and cancelled steps become " +
      "`pending` and run again with job ids `step-{id}-redrive-{n}`, from the point of failure " +
      "(steps that succeeded are not run again); phases it never ran while failed are caught up; " +
      "later steps and phases follow as usual. A batch or phase that had ended is reopened. " +
      "Paused batches send nothing until resumed. Refused (409, nothing written) for a cancelled " +
      "batch, one that has not started its phases, a member that is not failed, a step that did " +
      "not fail, and init steps (`initExecutionId`: a batch failed in its init cannot be reopened).",
    access: "Operator",
    params: z.object({ id: positiveId.meta({ description: "Batch id" }) }),
    body: {
      content: { "application/json": redriveRequestSchema },
      limit: "256kb",
      invalid:
        'Send JSON {"members":"failed"}, {"memberIds":[1,2]} or {"stepExecutionId":3}; `problems` ' +
        "says what is wrong",
      description: "Which members to redrive: exactly one of the fields",
    },
    errors: ["resource.not_found", "state.conflict"],
    responses: { 202: { description: "Redriven; the steps are on their way", schema: redriveResultSchema } },
  }).handle(async ({ params, body, principal, deps }) => ({
    status: 202,
    body: await redriveBatchCommand(deps.db, params.id, targetOf(body), principal.identity),
  })),
];

function targetOf(body: z.output<typeof redriveRequestSchema>): RedriveTarget {
  if (body.memberIds !== undefined) return { kind: "members", memberIds: body.memberIds };
  if (body.stepExecutionId !== undefined) return { kind: "step", stepExecutionId: body.stepExecutionId };
  if (body.initExecutionId !== undefined) return { kind: "init", initExecutionId: body.initExecutionId };
  return { kind: "failedMembers" };
}

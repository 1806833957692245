import { z } from "zod";
import { decidePhaseApprovalCommand } from "../commands/decide-phase-approval.ts";
import { MAX_SQL_INTEGER, positiveId, wholeNumber } from "../http/params.ts";
import { defineOperation } from "../openapi/operation.ts";
import { count, id } from "../openapi/wire-types.ts";

const phaseParams = z.object({
  id: positiveId.meta({ description: "Batch id" }),
  seq: wholeNumber(0, MAX_SQL_INTEGER).meta({
    description: "The phase's position in the runbook, from 0 (`sequence` in GET /api/batches/{id})",
  }),
});

const decisionResultSchema = z
  .object({
    batchId: id,
    phaseExecutionId: id,
    phaseName: z.string(),
    sequence: count,
    status: z.enum(["dispatched", "failed"]).meta({
      description: "dispatched: approved, its steps start; failed: rejected (phase.rejected), nothing sent",
    }),
    approvalDecision: z.enum(["approved", "rejected"]),
  })
  .meta({ id: "PhaseApprovalResult" });

const refusals =
  "404 when the batch or the phase does not exist; 409 (state.conflict, naming the status) when the " +
  "phase is not awaiting approval: not due yet, already decided, cancelled with its batch, or " +
  "superseded by a new runbook version.";

/**
 * Approval gates (issue 30): the go / no-go of a phase whose runbook says `approval: required`,
 * recorded in the audit trail (events.actor) with the operator who decided.
 */
export const phaseApprovalOperations = [
  defineOperation({
    method: "post",
    path: "/api/batches/{id}/phases/{seq}/approve",
    operationId: "approvePhase",
    tag: "batches",
    summary: "Approve a phase awaiting approval: it is sent as if it had just fallen due",
    description:
      "The phase moves to `dispatched` and its steps start for every active member; phases that " +
      "waited behind it follow when they are due. The batch must be `active`: a paused batch answers " +
      `409 (resume it first). ${refusals}`,
    access: "Operator",
    params: phaseParams,
    errors: ["resource.not_found", "state.conflict"],
    responses: { 202: { description: "Approved: the phase is dispatched", schema: decisionResultSchema } },
  }).handle(async ({ params, principal, deps }) => ({
    status: 202,
    body: await decidePhaseApprovalCommand(deps.db, {
      batchId: params.id,
      sequence: params.seq,
      decision: "approve",
      actor: principal.identity,
    }),
  })),

  defineOperation({
    method: "post",
    path: "/api/batches/{id}/phases/{seq}/reject",
    operationId: "rejectPhase",
    tag: "batches",
    summary: "Reject a phase awaiting approval: it fails with phase.rejected, nothing of it is sent",
    description:
      "The phase ends `failed` (outcome failed, no member counted) and the batch goes on as after any " +
      "failed phase: later phases still run (an automated batch's when due, a manual batch's when " +
      "advanced); cancel the batch to stop it. Allowed while the batch is paused. " +
      refusals,
    access: "Operator",
    params: phaseParams,
    errors: ["resource.not_found", "state.conflict"],
    responses: { 200: { description: "Rejected: the phase failed", schema: decisionResultSchema } },
  }).handle(async ({ params, principal, deps }) => ({
    status: 200,
    body: await decidePhaseApprovalCommand(deps.db, {
      batchId: params.id,
      sequence: params.seq,
      decision: "reject",
      actor: principal.identity,
    }),
  })),
];

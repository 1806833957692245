import {
  getBatchRef,
  getPhase,
  lockBatch,
  transitionPhase,
  type Db,
  type PhaseExecution,
} from "@matoolkit/db";
import { reasonCodes, type BatchStatus, type PhaseStatus } from "@matoolkit/domain";
import { sendPhase } from "./dispatch-phase.ts";
import { notifyBatchChanged } from "./notify-batch-changed.ts";
import { notifyPhaseApproval, notifyPhaseEnded } from "./notify.ts";

export type ApprovalDecision = "approve" | "reject";

export interface DecideApprovalArgs {
  readonly batchId: number;
  readonly phaseId: number;
  readonly decision: ApprovalDecision;
  /** The operator (events.actor, the audit trail); absent when the approval timeout decides. */
  readonly actor?: string;
}

export type ApprovalOutcome =
  | { readonly kind: "decided"; readonly phase: PhaseExecution }
  | { readonly kind: "batch_missing" }
  | { readonly kind: "phase_missing" }
  /** Approve needs an active batch (a paused one sends nothing; a resume first). */
  | { readonly kind: "batch_not_active"; readonly status: BatchStatus }
  | { readonly kind: "phase_not_awaiting"; readonly phase: PhaseExecution; readonly status: PhaseStatus };

/**
 * An approval gate's decision (issue 30), in the caller's transaction, by an operator or by the
 * approval timeout (no actor):
 * - approve: awaiting_approval → dispatched and the phase-due, as if the phase had just fallen due;
 * - reject: awaiting_approval → failed with `phase.rejected`, nothing sent; the batch then goes on
 *   as after any failed phase (the nudge has the batch workflow run its completion checks, and
 *   dispatch later phases that waited behind this one when they are due).
 *
 * The batch row is share-locked first, as every dispatcher takes it: a pause or cancel (which lock
 * it for update) and a decision take turns, so an approval can never send a phase of a batch that
 * paused meanwhile. Approve refuses a batch that is not active; an operator's reject also decides
 * a paused batch's gate (it sends nothing). The timeout decides only while the batch is active
 * (`activeOnly`): one that passed during a pause applies once the batch is resumed.
 */
export async function decidePhaseApproval(
  trx: Db,
  args: DecideApprovalArgs & { readonly activeOnly?: boolean },
): Promise<ApprovalOutcome> {
  const batch = await lockBatch(trx, args.batchId, "share");
  if (batch === undefined) return { kind: "batch_missing" };
  const phase = await getPhase(trx, args.phaseId);
  if (phase === undefined || phase.batchId !== args.batchId) return { kind: "phase_missing" };
  const needsActive = args.decision === "approve" || args.activeOnly === true;
  // A phase can only wait in a running batch: a cancelled or ended batch has no gate to decide.
  if (phase.status !== "awaiting_approval")
    return { kind: "phase_not_awaiting", phase, status: phase.status };
  if (needsActive && batch.status !== "active") return { kind: "batch_not_active", status: batch.status };

  const decidedBy = args.actor === undefined ? "timeout" : "operator";
  const decided =
    args.decision === "approve"
      ? await transitionPhase(trx, phase.id, "approve", {
          reason: approveReason(decidedBy),
          actor: args.actor,
        })
      : await transitionPhase(trx, phase.id, "reject", {
          reason: rejectReason(decidedBy),
          actor: args.actor,
        });
  if (decided === undefined) {
    // Decided by someone else since the read above (the transition waited for their commit).
    const current = (await getPhase(trx, phase.id)) ?? phase;
    return { kind: "phase_not_awaiting", phase: current, status: current.status };
  }
  const at = new Date();
  if (args.decision === "approve") {
    const ref = await getBatchRef(trx, args.batchId);
    if (ref === undefined) throw new Error(`batch ${args.batchId} has no runbook`);
    await sendPhase(trx, args.batchId, ref.runbookName, decided);
  }
  await notifyPhaseApproval(trx, {
    type: args.decision === "approve" ? "phase.approved" : "phase.rejected",
    phase: decided,
    batchId: args.batchId,
    decidedBy,
    at,
  });
  if (args.decision === "reject") {
    // It ended: subscribers of phase.failed hear about it as about any failed phase.
    await notifyPhaseEnded(trx, {
      phase: { ...decided, status: "failed" },
      batchId: args.batchId,
      outcome: "failed",
      counts: { succeededMembers: 0, failedMembers: 0 },
      at,
    });
  }
  await notifyBatchChanged(
    trx,
    args.batchId,
    args.decision === "approve" ? "phase-approved" : "phase-rejected",
  );
  return { kind: "decided", phase: decided };
}

function approveReason(decidedBy: "operator" | "timeout"): string {
  return decidedBy === "operator"
    ? "approved by operator"
    : "approval timed out: approved (approval_timeout_outcome approve)";
}

function rejectReason(decidedBy: "operator" | "timeout"): string {
  return decidedBy === "operator"
    ? `${reasonCodes.phaseRejected}: rejected by operator`
    : `${reasonCodes.phaseRejected}: approval timed out (approval_timeout_outcome reject)`;
}

import { decidePhaseApproval, type ApprovalDecision } from "@matoolkit/commands";
import { getBatch, listPhases, type Batch, type Db, type PhaseExecution } from "@matoolkit/db";
import { batchMachine } from "@matoolkit/domain";
import { conflict, notFound } from "../http/api-error.ts";

export interface PhaseDecisionResult {
  readonly batchId: number;
  readonly phaseExecutionId: number;
  readonly phaseName: string;
  readonly sequence: number;
  /** `dispatched` once approved (its steps start), `failed` once rejected. */
  readonly status: "dispatched" | "failed";
  readonly approvalDecision: "approved" | "rejected";
}

/**
 * POST /api/batches/{id}/phases/{seq}/approve and …/reject (issue 30): the operator's decision on
 * a phase awaiting approval, in one transaction (libs/commands decidePhaseApproval: the batch
 * share-locked, the guarded transition with the operator as actor, the phase-due or the failure,
 * the notifications and the nudge). Refusals answer with what stands in the way, writing nothing:
 * 404 for no such batch or phase, 409 for a phase that does not wait (any more) or, to approve,
 * a batch that is not active (a paused one is resumed first).
 */
export async function decidePhaseApprovalCommand(
  db: Db,
  args: { batchId: number; sequence: number; decision: ApprovalDecision; actor: string },
): Promise<PhaseDecisionResult> {
  const { batchId, sequence, decision } = args;
  return db.transaction().execute(async (trx) => {
    const batch = await getBatch(trx, batchId);
    if (batch === undefined) throw notFound(`batch ${batchId} does not exist`);
    const phases = await listPhases(trx, batchId);
    const phase = phaseAt(phases, sequence);
    if (phase === undefined) {
      throw notFound(
        `batch ${batchId} has no phase ${sequence} (its phases are 0 to ${lastSequence(phases)})`,
      );
    }
    const outcome = await decidePhaseApproval(trx, {
      batchId,
      phaseId: phase.id,
      decision,
      actor: args.actor,
    });
    const named = `phase ${phase.phaseName} (${sequence}) of batch ${batchId}`;
    switch (outcome.kind) {
      case "decided":
        return {
          batchId,
          phaseExecutionId: outcome.phase.id,
          phaseName: outcome.phase.phaseName,
          sequence,
          status: decision === "approve" ? "dispatched" : "failed",
          approvalDecision: decision === "approve" ? "approved" : "rejected",
        };
      case "batch_missing":
        throw notFound(`batch ${batchId} does not exist`);
      case "phase_missing":
        throw notFound(`batch ${batchId} has no phase ${sequence}`);
      case "batch_not_active":
        throw conflict(
          outcome.status === "paused"
            ? `batch ${batchId} is paused; resume it before approving ${named}`
            : `batch ${batchId} is ${outcome.status}; only a phase of an active batch can be approved`,
        );
      case "phase_not_awaiting":
        throw conflict(
          `${named} is ${outcome.status}${batchNote(batch)}; only a phase awaiting approval can be ${decision === "approve" ? "approved" : "rejected"}`,
        );
      default: {
        const unreachable: never = outcome;
        throw new Error(`unknown approval outcome ${JSON.stringify(unreachable)}`);
      }
    }
  });
}

/**
 * The phase at position `sequence` of the runbook: the one waiting for approval if any, else the
 * newest runbook version's (a version transition leaves the old rows, superseded, beside the new).
 */
function phaseAt(phases: readonly PhaseExecution[], sequence: number): PhaseExecution | undefined {
  const candidates = phases.filter((phase) => phase.sequence === sequence);
  return (
    candidates.find((phase) => phase.status === "awaiting_approval") ??
    [...candidates].sort((a, b) => b.runbookVersion - a.runbookVersion || b.id - a.id)[0]
  );
}

function lastSequence(phases: readonly PhaseExecution[]): number {
  return Math.max(-1, ...phases.map((phase) => phase.sequence));
}

/** "(the batch is cancelled)": why a phase no longer waits, when its batch ended. */
function batchNote(batch: Batch): string {
  return batchMachine.isTerminal(batch.status) ? ` (the batch is ${batch.status})` : "";
}

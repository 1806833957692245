import { decidePhaseApproval } from "@matoolkit/commands";
import type { Db, PhaseExecution } from "@matoolkit/db";

/**
 * Approval timeouts (issue 30): a phase that has waited in `awaiting_approval` past its
 * `approval_expires_at` gets its runbook's `approval_timeout_outcome`, as an operator's decision
 * would (no actor: the events say the timeout decided). Run by the batch workflow's activity, whose
 * timer wakes at the earliest expiry (nextApprovalExpiry); both read PostgreSQL only, so a restart
 * loses no timeout: the workflow started again at reconcile applies what expired meanwhile.
 * Only while the batch is active: one that expired during a pause applies after the resume.
 */
export async function applyApprovalTimeouts(
  db: Db,
  phases: readonly PhaseExecution[],
  now: Date,
): Promise<number> {
  let decided = 0;
  for (const phase of phases) {
    if (!isExpired(phase, now)) continue;
    const outcome = await db.transaction().execute((trx) =>
      decidePhaseApproval(trx, {
        batchId: phase.batchId,
        phaseId: phase.id,
        // A timeout without an outcome cannot exist (0015 stores both); reject is the safe reading.
        decision: phase.approvalTimeoutOutcome ?? "reject",
        activeOnly: true,
      }),
    );
    if (outcome.kind === "decided") decided += 1;
  }
  return decided;
}

/** The earliest approval expiry still ahead, for the workflow's timer; null when none. */
export function nextApprovalExpiry(phases: readonly PhaseExecution[], now: Date): number | null {
  const ahead = phases
    .filter((phase) => phase.status === "awaiting_approval" && phase.approvalExpiresAt !== null)
    .map((phase) => phase.approvalExpiresAt!.getTime())
    .filter((at) => at > now.getTime());
  return ahead.length === 0 ? null : Math.min(...ahead);
}

function isExpired(phase: PhaseExecution, now: Date): boolean {
  return (
    phase.status === "awaiting_approval" &&
    phase.approvalExpiresAt !== null &&
    phase.approvalExpiresAt.getTime() <= now.getTime()
  );
}

import { useState } from "preact/hooks";
import { hasRoleOrAbove, type Session } from "../../auth/session.ts";
import { ConfirmDialog } from "../../components/confirm-dialog.tsx";
import { decidePhase, describeError, type PhaseDecision, type PhaseSummary } from "./batch-api.ts";

const decisions: Readonly<Record<PhaseDecision, { label: string; title: string; explain: string }>> = {
  approve: {
    label: "Approve",
    title: "Approve the phase?",
    explain: "It is sent now for every active member, as if it had just fallen due.",
  },
  reject: {
    label: "Reject",
    title: "Reject the phase?",
    explain:
      "It fails (phase.rejected) and nothing of it is sent. The batch goes on as after a failed phase: cancel the batch to stop it.",
  },
};

/**
 * A phase's approval gate (issue 30) on its card: what it waits for and, for an Operator or Admin,
 * Approve and Reject behind a confirmation dialog while it awaits approval. Readers see the state
 * only (the API refuses them too); the dialog shows a refusal with its reason (a paused batch).
 */
export function PhaseApproval(props: {
  readonly batchId: number;
  readonly phase: PhaseSummary;
  readonly session: Session | undefined;
  readonly onActed: (message: string) => void;
}) {
  const { phase } = props;
  const [pending, setPending] = useState<PhaseDecision | undefined>(undefined);
  if (!phase.approvalRequired) return null;
  const waiting = phase.status === "awaiting_approval";
  const canAct = hasRoleOrAbove(props.session, "Operator");

  const confirm = async () => {
    if (pending === undefined) return;
    try {
      await decidePhase(props.batchId, phase.sequence, pending);
    } catch (error) {
      throw new Error(describeError(error));
    }
    setPending(undefined);
    props.onActed(`${decisions[pending].label} ${phase.phaseName}: done.`);
  };

  return (
    <div class="phase-approval" data-testid="phase-approval">
      <p>{approvalText(phase)}</p>
      {waiting &&
        (canAct ? (
          <div class="batch-actions" role="group" aria-label={`Approval of ${phase.phaseName}`}>
            {(["approve", "reject"] as const).map((decision) => (
              <button
                key={decision}
                type="button"
                class={decision === "reject" ? "danger" : undefined}
                data-phase-action={decision}
                onClick={() => setPending(decision)}
              >
                {decisions[decision].label}
              </button>
            ))}
          </div>
        ) : (
          <p class="muted">An Operator or Admin approves or rejects it.</p>
        ))}
      <ConfirmDialog
        open={pending !== undefined}
        title={pending === undefined ? "" : `${decisions[pending].title.slice(0, -1)} ${phase.phaseName}?`}
        confirmLabel={pending === undefined ? "" : decisions[pending].label}
        danger={pending === "reject"}
        onConfirm={confirm}
        onCancel={() => setPending(undefined)}
      >
        <p>{pending === undefined ? "" : decisions[pending].explain}</p>
      </ConfirmDialog>
    </div>
  );
}

function approvalText(phase: PhaseSummary): string {
  if (phase.approvalDecision !== null) return `Approval: ${phase.approvalDecision}`;
  if (phase.status !== "awaiting_approval") return "Approval: required when due";
  return phase.approvalExpiresAt === null
    ? "Awaiting approval"
    : `Awaiting approval until ${new Date(phase.approvalExpiresAt).toLocaleString()}`;
}

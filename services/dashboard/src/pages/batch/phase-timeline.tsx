import type { Session } from "../../auth/session.ts";
import { StatusBadge } from "../../components/status-badge.tsx";
import type { BatchDetail } from "./batch-api.ts";
import { PhaseApproval } from "./phase-approval.tsx";

/**
 * The batch's phases in runbook order: when each is due (a manual batch's phases have no due
 * time: they run when advanced), its status and outcome, how it went for its members, and its
 * approval gate with the Operator's Approve / Reject while it waits (issue 30).
 */
export function PhaseTimeline(props: {
  readonly batch: BatchDetail;
  readonly session: Session | undefined;
  readonly onActed: (message: string) => void;
}) {
  const phases = [...props.batch.phases].sort((a, b) => a.sequence - b.sequence);
  return (
    <section class="batch-section" aria-labelledby="phases-title">
      <h2 id="phases-title">Phases</h2>
      {phases.length === 0 ? (
        <p class="muted">No phases.</p>
      ) : (
        <ol class="phase-timeline">
          {phases.map((phase) => (
            <li
              key={phase.id}
              class={`phase-card phase-${phase.status}`}
              data-testid="phase"
              data-phase={phase.phaseName}
              data-status={phase.status}
              aria-current={props.batch.currentPhase === phase.phaseName ? "step" : undefined}
            >
              <div class="phase-card-head">
                <span class="phase-name">{phase.phaseName}</span>
                <StatusBadge status={phase.status} />
              </div>
              <p class="phase-due">
                {phase.dueAt === null
                  ? "Due: when advanced"
                  : `Due: ${new Date(phase.dueAt).toLocaleString()}`}
              </p>
              {phase.outcome !== null && (
                <p>
                  Outcome: <strong>{phase.outcome.replace(/_/g, " ")}</strong>
                </p>
              )}
              <p class="phase-counts">
                <span>{phase.memberCounts.running} running</span>
                <span>{phase.memberCounts.succeeded} succeeded</span>
                {phase.memberCounts.skipped > 0 && <span>{phase.memberCounts.skipped} skipped</span>}
                <span>{phase.memberCounts.failed} failed</span>
                {phase.memberCounts.cancelled > 0 && <span>{phase.memberCounts.cancelled} cancelled</span>}
              </p>
              <PhaseApproval
                batchId={props.batch.id}
                phase={phase}
                session={props.session}
                onActed={props.onActed}
              />
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

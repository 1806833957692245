import { useState } from "preact/hooks";
import { hasRoleOrAbove, type Session } from "../../auth/session.ts";
import { ConfirmDialog } from "../../components/confirm-dialog.tsx";
import { StatusBadge } from "../../components/status-badge.tsx";
import { actionApplies, actionSpecs, type ActionSpec } from "./batch-actions.ts";
import { describeError, runAction, type BatchDetail } from "./batch-api.ts";
import { purgeNotice } from "./purge-wording.ts";

/**
 * The batch's identity, status, outcome and member counts, and the operator actions that apply
 * to it now, each behind a confirmation dialog. Readers see no actions (the API refuses them too).
 */
export function BatchHeader(props: {
  readonly batch: BatchDetail;
  readonly session: Session | undefined;
  /** Called after an action succeeded, with a sentence for the status line. */
  readonly onActed: (message: string) => void;
}) {
  const { batch } = props;
  const [pending, setPending] = useState<ActionSpec | undefined>(undefined);
  const canAct = hasRoleOrAbove(props.session, "Operator");
  const counts = batch.memberCounts;
  const total = counts.active + counts.failed + counts.removed;

  const confirm = async () => {
    if (pending === undefined) return;
    try {
      await runAction(batch.id, pending.action);
    } catch (error) {
      // The dialog shows the message; the code and status say why (e.g. 409 state.conflict).
      throw new Error(describeError(error));
    }
    setPending(undefined);
    props.onActed(`${pending.label}: done.`);
  };

  return (
    <header class="batch-header">
      <div class="batch-title">
        <h1 tabIndex={-1}>
          Batch {batch.id}{" "}
          <span class="muted">
            · {batch.runbookName} v{batch.runbookVersion}
          </span>
        </h1>
        <div class="batch-badges">
          <span data-testid="batch-status">
            <StatusBadge status={batch.status} />
          </span>
          {batch.outcome !== null && (
            <span data-testid="batch-outcome">
              <StatusBadge
                status={batch.outcome}
                tone={
                  batch.outcome === "succeeded"
                    ? "success"
                    : batch.outcome === "failed"
                      ? "danger"
                      : "warning"
                }
              />
            </span>
          )}
        </div>
      </div>
      <dl class="batch-facts">
        <div>
          <dt>Members</dt>
          <dd data-testid="member-total">{total}</dd>
        </div>
        <div>
          <dt>Active</dt>
          <dd>{counts.active}</dd>
        </div>
        <div>
          <dt>Failed</dt>
          <dd data-testid="member-failed">{counts.failed}</dd>
        </div>
        <div>
          <dt>Removed</dt>
          <dd>{counts.removed}</dd>
        </div>
        <div>
          <dt>Current phase</dt>
          <dd>{batch.currentPhase ?? "—"}</dd>
        </div>
        <div>
          <dt>{batch.isManual ? "Created" : "Starts"}</dt>
          <dd>
            {new Date(
              batch.isManual ? batch.detectedAt : (batch.batchStartTime ?? batch.detectedAt),
            ).toLocaleString()}
          </dd>
        </div>
        {batch.createdBy !== null && (
          <div>
            <dt>By</dt>
            <dd>{batch.createdBy}</dd>
          </div>
        )}
      </dl>
      {purgeNotice(batch) !== null && (
        <p class="muted" data-testid="batch-purged">
          {purgeNotice(batch)}
        </p>
      )}
      {canAct ? (
        <div class="batch-actions" role="group" aria-label="Batch actions">
          {actionSpecs
            .filter((spec) => actionApplies(spec.action, batch))
            .map((spec) => (
              <button
                key={spec.action}
                type="button"
                class={spec.danger ? "danger" : undefined}
                data-action={spec.action}
                onClick={() => setPending(spec)}
              >
                {spec.label}
              </button>
            ))}
        </div>
      ) : (
        <p class="muted">Actions need the Operator or Admin role.</p>
      )}
      <ConfirmDialog
        open={pending !== undefined}
        title={pending?.title ?? ""}
        confirmLabel={pending?.label ?? ""}
        danger={pending?.danger}
        onConfirm={confirm}
        onCancel={() => setPending(undefined)}
      >
        <p>{pending?.explain(batch)}</p>
      </ConfirmDialog>
    </header>
  );
}

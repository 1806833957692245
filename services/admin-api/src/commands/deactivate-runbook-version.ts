import {
  deactivateRunbookVersion,
  listInFlightAutomatedBatches,
  lockRunbookVersion,
  recordAuditEvent,
  runbookNameExists,
  type Db,
  type Runbook,
} from "@matoolkit/db";
import { conflict, notFound } from "../http/api-error.ts";

export interface DeactivateResult {
  readonly runbook: Runbook;
  /** True when the version was not active before this request: nothing was changed. */
  readonly alreadyInactive: boolean;
}

/** Batch ids named in the refusal; more are counted, not listed. */
const MAX_IDS_IN_MESSAGE = 10;

/**
 * DELETE /api/runbooks/{name}/versions/{v} (000 "Deactivate version"): is_active = false on that
 * version. 000 keeps at most one active version per name and publishing deactivates the previous
 * one, so only the active (latest published) version can actually change; any other version
 * answers 200 with alreadyInactive (so does a repeated DELETE). Versions are never deleted:
 * batches reference the version they run, and it stays readable under /versions/{v}.
 *
 * Deactivating the active version leaves the runbook with none until the next publish (which
 * becomes version max+1 and active): GET /api/runbooks/{name} answers 404, it is left out of the
 * list, no manual batch can be created from it, and the scheduler stops processing it, so no new
 * automated batches. Running manual batches are unaffected: they run the version they were created
 * with, and are advanced by an operator.
 *
 * Refused (409) while automated batches of the runbook are in flight: the scheduler syncs their
 * members (000 "Member Synchronization") and moves them to new versions only through the active
 * version, so they would silently stop following the data source, and a member who leaves the
 * source would still be migrated. Cancel them, or publish a corrected version (which replaces this
 * one and moves them onto it), instead.
 */
export async function deactivateRunbookVersionCommand(
  db: Db,
  name: string,
  version: number,
  /** The operator: the audit event's actor (entity runbook, active → inactive, same transaction). */
  actor: string,
): Promise<DeactivateResult> {
  return db.transaction().execute(async (trx) => {
    // Locked: a publish (which deactivates this row) or a scheduler tick creating a batch on it
    // waits for us, or has committed and is seen below.
    const row = await lockRunbookVersion(trx, name, version);
    if (row === undefined) {
      if (await runbookNameExists(trx, name)) throw notFound(`runbook '${name}' has no version ${version}`);
      throw notFound(`no runbook named '${name}'`);
    }
    if (!row.isActive) return { runbook: row, alreadyInactive: true };
    const inFlight = await listInFlightAutomatedBatches(trx, name);
    if (inFlight.length > 0) {
      const ids = inFlight.slice(0, MAX_IDS_IN_MESSAGE).map((batch) => batch.id);
      const more = inFlight.length > ids.length ? ` and ${inFlight.length - ids.length} more` : "";
      throw conflict(
        `runbook '${name}' version ${version} is active and ${inFlight.length} automated batch(es) ` +
          `are in flight (${ids.join(", ")}${more}); their member sync needs an active version: ` +
          "cancel them, or publish a corrected version instead",
      );
    }
    const deactivated = await deactivateRunbookVersion(trx, row.id);
    if (deactivated === undefined) throw new Error(`locked active runbook version ${row.id} did not change`);
    await recordAuditEvent(trx, {
      batchId: null,
      entity: "runbook",
      entityId: row.id,
      fromStatus: "active",
      toStatus: "inactive",
      reason: `deactivated ${name} version ${version}`,
      actor,
    });
    return { runbook: deactivated, alreadyInactive: false };
  });
}

import {
  findRecentBatchWithFingerprint,
  getActiveRunbook,
  insertBatch,
  insertMembersCounted,
  insertPhases,
  recordBatchSourceFingerprint,
  setExternalRefFromMembers,
  transitionBatch,
  type Batch,
  type Db,
} from "@matoolkit/db";
import { phaseRowsFor } from "@matoolkit/commands";
import { externalRefColumnOf, parseRunbookOrThrow } from "@matoolkit/domain";
import type { CsvUpload } from "../csv/csv-upload.ts";
import { parseMembersCsv } from "../csv/parse-members-csv.ts";
import { loopSlicer } from "../csv/time-slicer.ts";
import { uploadFingerprint } from "../csv/upload-fingerprint.ts";
import { ApiError, notFound } from "../http/api-error.ts";
import type { RowLimit } from "../http/request-limits.ts";

export interface CreateManualBatchRequest {
  readonly runbookName: string;
  readonly csv: CsvUpload;
  /** The operator (principal.identity): created_by and the 'created' event's actor. */
  readonly createdBy: string;
  /** Given with the upload (already checked); else read from the runbook's external_ref_column. */
  readonly externalRef?: string;
  /** Refuse an identical upload (same runbook, same CSV) within this many minutes; 0: never. */
  readonly duplicateWindowMinutes: number;
  /** Create it even when an identical upload was just made (`?allowDuplicate=true`). */
  readonly allowDuplicate: boolean;
  /** At most this many member rows (http/request-limits.ts). */
  readonly rowLimit: RowLimit;
}

/**
 * 000 "Manual Batch Lifecycle" step 1: a batch with is_manual, no start time, its members from
 * the CSV and one phase execution per runbook phase with due_at NULL; all in one transaction,
 * after the whole CSV was validated. A runbook without init makes the batch active at once.
 *
 * Duplicate protection: the same CSV for the same runbook (name, so a republish in between does
 * not hide it) within the window, while that batch is not cancelled, is almost always a double
 * submit that would migrate the same members twice: 409 batch.duplicate naming the batch, nothing
 * written. The check and the insert hold an advisory lock on the fingerprint, so two identical
 * uploads sent at the same moment create one batch, not two.
 */
export async function createManualBatchCommand(
  db: Db,
  request: CreateManualBatchRequest,
): Promise<{ batch: Batch; memberCount: number }> {
  const runbookRow = await getActiveRunbook(db, request.runbookName);
  if (runbookRow === undefined) throw notFound(`no active runbook named '${request.runbookName}'`);
  const runbook = parseRunbookOrThrow(runbookRow.yamlContent);
  const members = await parseMembersCsv(request.csv, runbook.dataSource, { rowLimit: request.rowLimit });
  const fingerprint = await uploadFingerprint(request.runbookName, request.csv.texts(), () =>
    loopSlicer.pause(),
  );
  return db.transaction().execute(async (trx) => {
    if (!request.allowDuplicate && request.duplicateWindowMinutes > 0) {
      const existing = await findRecentBatchWithFingerprint(
        trx,
        fingerprint,
        request.duplicateWindowMinutes * 60,
      );
      if (existing !== undefined) {
        throw new ApiError(
          409,
          "batch.duplicate",
          `batch ${existing.id} was created from the same runbook and CSV at ${existing.createdAt.toISOString()} ` +
            `(within the last ${request.duplicateWindowMinutes} minutes) and is not cancelled; nothing was ` +
            "created. Use that batch, or repeat with allowDuplicate=true to create another",
          { existingBatchId: existing.id },
        );
      }
    }
    const created = await insertBatch(trx, {
      runbookId: runbookRow.id,
      batchStartTime: null,
      isManual: true,
      createdBy: request.createdBy,
      externalRef: request.externalRef ?? null,
      actor: request.createdBy,
    });
    await recordBatchSourceFingerprint(trx, created.id, fingerprint);
    await insertMembersCounted(trx, created.id, members);
    const refColumn = request.externalRef === undefined ? externalRefColumnOf(runbook) : undefined;
    const externalRef =
      refColumn === undefined
        ? created.externalRef
        : await setExternalRefFromMembers(trx, created.id, refColumn);
    // No start time: the phases have no due time, an operator advances them.
    await insertPhases(trx, created.id, phaseRowsFor(runbook, runbookRow.version, null));
    // Part of the operator's request, so it names them too (cascades onto child rows do not).
    const activated =
      runbook.init.length === 0
        ? await transitionBatch(trx, created.id, "activate", {
            reason: "runbook has no init steps",
            actor: request.createdBy,
          })
        : undefined;
    const batch = { ...(activated ?? created), externalRef };
    return { batch, memberCount: members.length };
  });
}

import {
  getActiveRunbook,
  insertBatch,
  insertMembers,
  insertPhases,
  transitionBatch,
  type Batch,
  type Db,
} from "@matoolkit/db";
import { parseRunbookOrThrow } from "@matoolkit/domain";
import { parseMembersCsv } from "../csv/parse-members-csv.ts";
import { notFound } from "../http/api-error.ts";

/**
 * 000 "Manual Batch Lifecycle" step 1: a batch with is_manual, no start time, its members from
 * the CSV and one phase execution per runbook phase with due_at NULL; all in one transaction,
 * after the whole CSV was validated. A runbook without init makes the batch active at once.
 */
export async function createManualBatchCommand(
  db: Db,
  request: { runbookName: string; csv: string; createdBy: string },
): Promise<{ batch: Batch; memberCount: number }> {
  const runbookRow = await getActiveRunbook(db, request.runbookName);
  if (runbookRow === undefined) throw notFound(`no active runbook named '${request.runbookName}'`);
  const runbook = parseRunbookOrThrow(runbookRow.yamlContent);
  const members = parseMembersCsv(request.csv, runbook.dataSource);
  return db.transaction().execute(async (trx) => {
    const created = await insertBatch(trx, {
      runbookId: runbookRow.id,
      batchStartTime: null,
      isManual: true,
      createdBy: request.createdBy,
    });
    await insertMembers(trx, created.id, members);
    await insertPhases(
      trx,
      created.id,
      runbook.phases.map((phase, sequence) => ({
        phaseName: phase.name,
        sequence,
        offsetMinutes: phase.offsetMinutes,
        dueAt: null,
        runbookVersion: runbookRow.version,
      })),
    );
    const batch =
      runbook.init.length === 0
        ? ((await transitionBatch(trx, created.id, "activate", { reason: "runbook has no init steps" })) ??
          created)
        : created;
    return { batch, memberCount: members.length };
  });
}

import { getBatchesByIds, getBatchWithRunbook, type Db } from "@matoolkit/db";
import { buildTemplateVariables, type BatchStatus } from "@matoolkit/domain";

/** What the orchestrator needs to know about a batch to dispatch its work. */
export interface BatchInfo {
  readonly id: number;
  readonly status: BatchStatus;
  readonly runbookName: string;
  readonly batchStartTime: Date | null;
}

export async function loadBatchInfo(db: Db, batchId: number): Promise<BatchInfo | undefined> {
  const batch = await getBatchWithRunbook(db, batchId);
  return batch === undefined ? undefined : toBatchInfo(batch);
}

/** Several batches in one query, by id. */
export async function loadBatchInfos(db: Db, batchIds: readonly number[]): Promise<Map<number, BatchInfo>> {
  const rows = await getBatchesByIds(db, batchIds);
  return new Map(rows.map((row) => [row.id, toBatchInfo(row)]));
}

function toBatchInfo(batch: BatchInfo): BatchInfo {
  return {
    id: batch.id,
    status: batch.status,
    runbookName: batch.runbookName,
    batchStartTime: batch.batchStartTime,
  };
}

/** Template variables of one member (data columns, worker outputs, specials) or of the batch (init). */
export function variablesFor(
  batch: BatchInfo,
  member?: { dataJson: unknown; workerDataJson: unknown },
): Record<string, unknown> {
  return buildTemplateVariables({
    memberData: (member?.dataJson ?? undefined) as Record<string, unknown> | undefined,
    workerData: (member?.workerDataJson ?? undefined) as Record<string, unknown> | undefined,
    batchId: batch.id,
    batchStartTime: batch.batchStartTime,
  });
}

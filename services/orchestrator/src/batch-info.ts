import {
  getBatchesByIds,
  lockBatchesForShare,
  lockBatchesOfExecutionsForShare,
  lockBatchesWithPhasesOfStepsForShare,
  type Db,
  type PhaseExecution,
} from "@matoolkit/db";
import { buildTemplateVariables, type BatchStatus, type ExecutionAddress } from "@matoolkit/domain";

/** What the orchestrator needs to know about a batch to dispatch its work. */
export interface BatchInfo {
  readonly id: number;
  readonly status: BatchStatus;
  readonly runbookName: string;
  readonly batchStartTime: Date | null;
}

/** One batch; its runbook's YAML is not read (nothing here needs it, and a runbook can be large). */
export async function loadBatchInfo(db: Db, batchId: number): Promise<BatchInfo | undefined> {
  return (await loadBatchInfos(db, [batchId])).get(batchId);
}

/** Several batches in one query, by id. */
export async function loadBatchInfos(db: Db, batchIds: readonly number[]): Promise<Map<number, BatchInfo>> {
  const rows = await getBatchesByIds(db, batchIds);
  return new Map(rows.map((row) => [row.id, toBatchInfo(row)]));
}

/**
 * Several batches in one statement, each row locked FOR SHARE until the transaction ends (see
 * lockBatchesForShare). Every transaction that may send a worker job reads its batches this way
 * BEFORE it locks an execution row, so a pause is race-free: it either waits for that transaction
 * (whose jobs were already out when the batch paused) or commits first, and the transaction then
 * reads `paused` and sends nothing.
 */
export async function lockBatchInfos(db: Db, batchIds: readonly number[]): Promise<Map<number, BatchInfo>> {
  const rows = await lockBatchesForShare(db, batchIds);
  return new Map(rows.map((row) => [row.id, toBatchInfo(row)]));
}

/** One batch, locked as lockBatchInfos does. */
export async function lockBatchInfo(db: Db, batchId: number): Promise<BatchInfo | undefined> {
  return (await lockBatchInfos(db, [batchId])).get(batchId);
}

/**
 * The batches of these executions, locked as lockBatchInfos does, in ONE statement: a group of
 * worker results (the hot path) locks its batches before any of its execution rows.
 */
export async function lockBatchInfosOfExecutions(
  db: Db,
  executions: readonly ExecutionAddress[],
): Promise<Map<number, BatchInfo>> {
  const rows = await lockBatchesOfExecutionsForShare(db, {
    stepIds: executions.filter((execution) => execution.kind === "step").map((execution) => execution.id),
    initIds: executions.filter((execution) => execution.kind === "init").map((execution) => execution.id),
  });
  return new Map(rows.map((row) => [row.id, toBatchInfo(row)]));
}

/**
 * The batches of these member steps, locked as lockBatchInfos does, and the steps' phases, in ONE
 * statement (lockBatchesWithPhasesOfStepsForShare): a group of member-step results needs both.
 */
export async function lockBatchInfosWithPhasesOfSteps(
  db: Db,
  stepIds: readonly number[],
): Promise<{ batches: Map<number, BatchInfo>; phases: Map<number, PhaseExecution> }> {
  const { batches, phases } = await lockBatchesWithPhasesOfStepsForShare(db, stepIds);
  return {
    batches: new Map(batches.map((row) => [row.id, toBatchInfo(row)])),
    phases: new Map(phases.map((phase) => [phase.id, phase])),
  };
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

import type { ExecutionEvent } from "@matoolkit/domain";
import { sql } from "kysely";
import type { Db } from "./connection.ts";
import {
  createExecutionRepository,
  type ExecutionTransitionOptions,
  type PollDispatch,
} from "./execution-repository.ts";
import { jsonb } from "./json.ts";
import type { NewStepExecution, StepExecution } from "./steps.table.ts";

const steps = createExecutionRepository<StepExecution>({
  table: "step_executions",
  entity: "step",
});

/**
 * Creates pending steps; a step that already exists for (phase, member, step index) is skipped, which
 * makes a duplicate phase-due harmless. Returns how many rows were actually inserted.
 */
export async function insertSteps(db: Db, rows: readonly NewStepExecution[]): Promise<number> {
  if (rows.length === 0) return 0;
  const result = await db
    .insertInto("stepExecutions")
    .values(
      rows.map((row) => ({
        ...row,
        paramsJson: jsonb(row.paramsJson ?? {}),
        resultJson: row.resultJson === undefined ? undefined : jsonb(row.resultJson),
      })),
    )
    .onConflict((conflict) =>
      conflict.columns(["phaseExecutionId", "batchMemberId", "stepIndex"]).doNothing(),
    )
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n);
}

export function getStep(db: Db, id: number): Promise<StepExecution | undefined> {
  return steps.get(db, id);
}

/** Like getStep, and locks the row until the transaction ends (see ExecutionRepository.getForUpdate). */
export function getStepForUpdate(db: Db, id: number): Promise<StepExecution | undefined> {
  return steps.getForUpdate(db, id);
}

/** By member, then step index. */
export async function listStepsByPhase(db: Db, phaseExecutionId: number): Promise<StepExecution[]> {
  return db
    .selectFrom("stepExecutions")
    .selectAll()
    .where("phaseExecutionId", "=", phaseExecutionId)
    .orderBy("batchMemberId")
    .orderBy("stepIndex")
    .execute();
}

/** Across all phases, in runbook order (phase sequence, then step index). */
export async function listStepsByMember(db: Db, batchMemberId: number): Promise<StepExecution[]> {
  return db
    .selectFrom("stepExecutions")
    .innerJoin("phaseExecutions", "phaseExecutions.id", "stepExecutions.phaseExecutionId")
    .selectAll("stepExecutions")
    .where("stepExecutions.batchMemberId", "=", batchMemberId)
    .orderBy("phaseExecutions.sequence")
    .orderBy("phaseExecutions.id")
    .orderBy("stepExecutions.stepIndex")
    .execute();
}

/** In creation order. */
export async function listStepsByBatch(
  db: Db,
  batchId: number,
  page: { readonly limit: number; readonly offset: number },
): Promise<StepExecution[]> {
  return db
    .selectFrom("stepExecutions")
    .selectAll()
    .where("batchId", "=", batchId)
    .orderBy("id")
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}

/** Applies `event` if the step is in one of its source states; undefined when another writer won. */
export function transitionStep(
  db: Db,
  id: number,
  event: ExecutionEvent,
  options?: ExecutionTransitionOptions,
): Promise<StepExecution | undefined> {
  return steps.transition(db, id, event, options);
}

/**
 * Cancels the member's open steps (pending, dispatched, polling) across all phases in one statement,
 * each with its event; succeeded and failed steps stay as they are. Returns the cancelled ids.
 */
export async function cancelOpenStepsOfMember(
  db: Db,
  batchMemberId: number,
  reason: string,
): Promise<number[]> {
  const cancelled = await steps.transitionWhere(db, sql`batch_member_id = ${batchMemberId}`, "cancel", {
    reason,
  });
  return cancelled.map((step) => step.id);
}

export function recordPollDispatch(
  db: Db,
  id: number,
  dispatch: PollDispatch,
): Promise<StepExecution | undefined> {
  return steps.recordPollDispatch(db, id, dispatch);
}

export function listPollingStepsDue(db: Db, now: Date): Promise<StepExecution[]> {
  return steps.listPollingDue(db, now);
}

import { chunksForInsert } from "./chunks.ts";
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
 * Creates pending steps; a step that already exists for (phase, member, step index, item index) is skipped, which
 * makes a duplicate phase-due harmless. Returns how many rows were actually inserted.
 */
export async function insertSteps(db: Db, rows: readonly NewStepExecution[]): Promise<number> {
  let inserted = 0;
  const values = rows.map((row) => ({
    ...row,
    paramsJson: jsonb(row.paramsJson ?? {}),
    resultJson: row.resultJson === undefined ? undefined : jsonb(row.resultJson),
  }));
  for (const chunk of chunksForInsert(values)) {
    const result = await db
      .insertInto("stepExecutions")
      .values(chunk)
      .onConflict((conflict) =>
        conflict.columns(["phaseExecutionId", "batchMemberId", "stepIndex", "itemIndex"]).doNothing(),
      )
      .executeTakeFirst();
    inserted += Number(result.numInsertedOrUpdatedRows ?? 0n);
  }
  return inserted;
}

export function getStep(db: Db, id: number): Promise<StepExecution | undefined> {
  return steps.get(db, id);
}

/** Like getStep, and locks the row until the transaction ends (see ExecutionRepository.getForUpdate). */
export function getStepForUpdate(db: Db, id: number): Promise<StepExecution | undefined> {
  return steps.getForUpdate(db, id);
}

/**
 * Whether the phase may close now: dispatched, every step created (phase-due's last chunk sets
 * `steps_created_at`), and none open. One statement (the phase row and one probe of
 * step_executions_open_idx): it runs after every result transaction, and with Dapr's small
 * transactions (a few results each) its statements were ~0.9 per step execution (issue 29).
 */
export async function phaseReadyToClose(db: Db, phaseExecutionId: number): Promise<boolean> {
  const row = await db
    .selectFrom("phaseExecutions as phase")
    .select("phase.id")
    .where("phase.id", "=", phaseExecutionId)
    .where("phase.status", "=", "dispatched")
    .where("phase.stepsCreatedAt", "is not", null)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom("stepExecutions as step")
            .select("step.id")
            .whereRef("step.phaseExecutionId", "=", "phase.id")
            .where("step.isOpen", "=", true),
        ),
      ),
    )
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Members with steps in the phase, those whose every step there succeeded (000: a phase is
 * completed when at least one member succeeded; a skipped step counts as done, issue 30, so a
 * member whose `when:` skipped its steps is through), and those with a failed or timed-out step (the
 * phase's outcome, issue 12; a member whose steps were only cancelled, e.g. removed, is neither),
 * in one aggregate query.
 */
export async function countPhaseMemberOutcomes(
  db: Db,
  phaseExecutionId: number,
): Promise<{ members: number; succeeded: number; failed: number; open: number }> {
  // One statement, one snapshot: `open` is read together with the counts, so a caller that saw
  // no open step a moment ago (before phase-due committed the steps) cannot act on counts that
  // already include those new, still-open steps.
  const row = await sql<{ members: number; succeeded: number; failed: number; open: number }>`
    SELECT count(*)::int AS members,
           count(*) FILTER (WHERE all_succeeded)::int AS succeeded,
           count(*) FILTER (WHERE any_failed)::int AS failed,
           count(*) FILTER (WHERE any_open)::int AS open
    FROM (
      SELECT bool_and(status IN ('succeeded', 'skipped')) AS all_succeeded,
             bool_or(status IN ('failed', 'poll_timeout')) AS any_failed,
             bool_or(status IN ('pending', 'dispatched', 'polling')) AS any_open
      FROM step_executions
      WHERE phase_execution_id = ${phaseExecutionId}
      GROUP BY batch_member_id
    ) per_member
  `.execute(db);
  return row.rows[0] ?? { members: 0, succeeded: 0, failed: 0, open: 0 };
}

/** By member, then step index. */
export async function listStepsByPhase(db: Db, phaseExecutionId: number): Promise<StepExecution[]> {
  return db
    .selectFrom("stepExecutions")
    .selectAll()
    .where("phaseExecutionId", "=", phaseExecutionId)
    .orderBy("batchMemberId")
    .orderBy("stepIndex")
    .orderBy("itemIndex")
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
    .orderBy("stepExecutions.itemIndex")
    .execute();
}

/**
 * In creation order. The page's ids come from an index-only scan of (batch_id, id), then only those
 * rows are read: skipping `offset` steps reads no row (a deep page of a 50,000-step batch read and
 * dropped 49,900 whole rows).
 */
export async function listStepsByBatch(
  db: Db,
  batchId: number,
  page: { readonly limit: number; readonly offset: number },
): Promise<StepExecution[]> {
  // `batch_id = ANY(ARRAY[$1]) ORDER BY batch_id, id`, not `batch_id = $1 ORDER BY id`: with a
  // plain equality the planner may walk the primary key and filter on batch_id, which it prices as
  // cheap as the (batch_id, id) index when it assumes the batch's rows are spread evenly through
  // the table; for the newest batch (its rows at the end) it then reads every older batch's steps
  // first (~40 ms for the first page behind 100,000 steps). An array match is no constant for the
  // planner, so only that index gives the (batch_id, id) order without sorting the batch.
  const pageIds = db
    .selectFrom("stepExecutions")
    .select("id")
    .where(sql<boolean>`batch_id = ANY(${sql.val([batchId])}::int[])`)
    .orderBy("batchId")
    .orderBy("id")
    .limit(page.limit)
    .offset(page.offset);
  return db.selectFrom("stepExecutions").selectAll().where("id", "in", pageIds).orderBy("id").execute();
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

/** Batch cancel: the batch's open steps (pending, dispatched, polling) → cancelled, one statement. */
export async function cancelOpenStepsOfBatch(db: Db, batchId: number, reason: string): Promise<number[]> {
  const cancelled = await steps.transitionWhere(db, sql`batch_id = ${batchId}`, "cancel", { reason });
  return cancelled.map((step) => step.id);
}

/**
 * Steps `dispatched` longer than their timeout_sec (default `defaultTimeoutSec` when null) as of
 * `now`, oldest dispatch first: the worker never answered. Reads the open rows (step_executions_open_idx).
 */
export function listStuckSteps(
  db: Db,
  now: Date,
  options: { readonly defaultTimeoutSec: number; readonly limit: number },
): Promise<StepExecution[]> {
  return steps.listDispatchedPastTimeout(db, now, options);
}

/**
 * Steps `dispatched` for at least `waitingSec` and not yet past their timeout, oldest first: no
 * result yet, perhaps because their job was lost on the way (see listDispatchedWaiting).
 */
export function listWaitingSteps(
  db: Db,
  now: Date,
  options: { readonly waitingSec: number; readonly defaultTimeoutSec: number; readonly limit: number },
): Promise<StepExecution[]> {
  return steps.listDispatchedWaiting(db, now, options);
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

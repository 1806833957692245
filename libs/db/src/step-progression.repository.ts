import { sql } from "kysely";
import type { PreparedExecution } from "@matoolkit/domain";
import type { BatchWithRunbook } from "./batches.repository.ts";
import type { Db } from "./connection.ts";
import { snakeToCamel } from "./camel-case.ts";
import { createExecutionRepository } from "./execution-repository.ts";
import type { BatchMember } from "./members.table.ts";
import type { PhaseExecution } from "./phases.table.ts";
import type { StepExecution } from "./steps.table.ts";
import { transitionStepsByReason } from "./step-transitions-by-reason.ts";

/**
 * The orchestrator's hot path, set-based: a batch of worker results and the dispatch of the next
 * steps they unblock each take one statement, whatever the batch size (issue 17: ≤10 SQL
 * statements per step). Every write is the same guarded transition as the one-row functions.
 */
const steps = createExecutionRepository<StepExecution>({ table: "step_executions", entity: "step" });

export interface StepResult {
  readonly id: number;
  /** The attempt the result answers: a result for an earlier attempt moves nothing. */
  readonly jobId: string;
  readonly result: unknown;
  readonly completedAt: Date;
}

/** dispatched/polling → succeeded for each result whose job is still the step's current one. */
export function succeedSteps(db: Db, results: readonly StepResult[]): Promise<StepExecution[]> {
  return steps.transitionEach(
    db,
    "succeed",
    results.map((result) => ({
      id: result.id,
      expectedJobId: result.jobId,
      set: { resultJson: result.result ?? null, completedAt: result.completedAt },
    })),
  );
}

export interface StepDispatch {
  readonly id: number;
  readonly jobId: string;
  readonly functionName: string;
  readonly paramsJson: Record<string, unknown>;
  readonly dispatchedAt: Date;
}

/** pending → dispatched with each step's job id and resolved function and parameters. */
export function dispatchSteps(db: Db, dispatches: readonly StepDispatch[]): Promise<StepExecution[]> {
  return steps.transitionEach(
    db,
    "dispatch",
    dispatches.map((dispatch) => ({
      id: dispatch.id,
      set: {
        jobId: dispatch.jobId,
        dispatchedAt: dispatch.dispatchedAt,
        functionName: dispatch.functionName,
        paramsJson: dispatch.paramsJson,
        paramsResolved: true,
      },
    })),
  );
}

export interface StepSkip {
  readonly id: number;
  /** The events row's reason: which `when:` was false (the same for every step of one clause). */
  readonly reason: string;
}

/**
 * pending → skipped (issue 30), one statement per distinct reason (a clause of the runbook, so a
 * handful however many members skip). Returns the steps that moved: one another delivery moved
 * first is not among them. The statements go in reason order (each locks its rows in id order),
 * so two deliveries skipping the same steps take their locks in one order and cannot deadlock.
 */
export function skipSteps(db: Db, skips: readonly StepSkip[]): Promise<StepExecution[]> {
  return transitionStepsByReason(
    db,
    "skip",
    skips.map((skip) => ({ reason: skip.reason, row: { id: skip.id } })),
  );
}

export interface MemberPhase {
  readonly memberId: number;
  readonly phaseExecutionId: number;
}

/**
 * Every step of each (member, phase) pair, by member then step index. The pairs come as two
 * arrays joined to the unique key (phase, member, step, item): a nested loop of index probes,
 * and one statement text whatever the number of pairs (prepared once, statement-cache.ts). A row
 * IN list of pairs, as before, was a bitmap scan per pair and a new text per count: ~25 ms for
 * a result batch of 128 members on bench:orchestrator.
 */
export async function listStepsOfMemberPhases(db: Db, pairs: readonly MemberPhase[]): Promise<ChainStep[]> {
  if (pairs.length === 0) return [];
  // A pair given twice (two values of one for_each step finishing together) reads its steps once.
  const distinct = [
    ...new Map(pairs.map((pair) => [`${pair.memberId}:${pair.phaseExecutionId}`, pair])).values(),
  ];
  const result = await sql<ChainStep>`
    SELECT ${sql.raw(chainColumns)} FROM unnest(${distinct.map((pair) => pair.phaseExecutionId)}::int[],
                           ${distinct.map((pair) => pair.memberId)}::int[]) AS k(phase_id, member_id)
    JOIN step_executions s ON s.phase_execution_id = k.phase_id AND s.batch_member_id = k.member_id
    ORDER BY s.batch_member_id, s.step_index, s.item_index`.execute(db);
  return result.rows;
}

/**
 * A step as a member's chain reads it: every column but the step's result and its timestamps
 * (a retry's `retry_after` excepted), which nothing deciding or dispatching the next step reads
 * (templates read the member's worker data). The chain is read whole at each step's end, so each
 * was parsed for every earlier step again: the result JSON of any size, five dates (a quarter of
 * the process's date parsing on bench:orchestrator, issue 29).
 */
export type ChainStep = Omit<
  StepExecution,
  "resultJson" | "dispatchedAt" | "completedAt" | "pollStartedAt" | "lastPolledAt" | "createdAt"
>;

/**
 * The columns of ChainStep, named in camelCase by the statement itself: the driver's rows are
 * the result, with no second object built per row (camelCaseRows) for a whole chain per step.
 * A test compares them with the table's columns.
 */
const chainColumns = `id batch_id phase_execution_id batch_member_id step_name step_index
  item_index item_value item_count worker_id function_name params_json params_resolved status
  is_open job_id error_message error_code is_poll_step poll_interval_sec poll_timeout_sec
  poll_count on_failure retry_count redrive_count max_retries retry_interval_sec retry_after
  timeout_sec`
  .split(/\s+/)
  .map((column) => `s.${column} AS "${snakeToCamel(column)}"`)
  .join(", ");

/**
 * The (member, phase) pairs in which these members have a pending step: where a member that has
 * just finished a phase may have work waiting in a later one (a redrive, issue 12). One probe of
 * step_executions_member_idx per member; the status is tested on its few rows.
 */
export async function listPendingMemberPhases(db: Db, memberIds: readonly number[]): Promise<MemberPhase[]> {
  if (memberIds.length === 0) return [];
  const rows = await db
    .selectFrom("stepExecutions")
    .select(["batchMemberId as memberId", "phaseExecutionId"])
    .distinct()
    .where("batchMemberId", "in", [...new Set(memberIds)])
    .where("status", "=", "pending")
    .execute();
  return rows;
}

/** Step executions by id, in one statement (a batch of retry checks reads its steps so). */
export async function getStepsByIds(db: Db, ids: readonly number[]): Promise<StepExecution[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom("stepExecutions")
    .selectAll()
    .where("id", "in", [...new Set(ids)])
    .execute();
}

export async function getMembersByIds(db: Db, ids: readonly number[]): Promise<BatchMember[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom("batchMembers")
    .selectAll()
    .where("id", "in", [...new Set(ids)])
    .execute();
}

export async function getPhasesByIds(db: Db, ids: readonly number[]): Promise<PhaseExecution[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom("phaseExecutions")
    .selectAll()
    .where("id", "in", [...new Set(ids)])
    .execute();
}

/** Batches with their runbook's name (the YAML is not read: the parsed runbook is cached by version). */
export async function getBatchesByIds(
  db: Db,
  ids: readonly number[],
): Promise<Omit<BatchWithRunbook, "yamlContent">[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom("batches")
    .innerJoin("runbooks", "runbooks.id", "batches.runbookId")
    .selectAll("batches")
    .select(["runbooks.name as runbookName", "runbooks.version as runbookVersion"])
    .where("batches.id", "in", [...new Set(ids)])
    .execute();
}

/** The phases the given steps belong to (for completion checks after results that moved nothing). */
export async function phaseIdsOfSteps(db: Db, ids: readonly number[]): Promise<number[]> {
  if (ids.length === 0) return [];
  const result = await sql<{ phase_execution_id: number }>`
    SELECT DISTINCT phase_execution_id FROM step_executions WHERE id = ANY(${[...ids]}::bigint[])`.execute(
    db,
  );
  return result.rows.map((row) => Number(row.phase_execution_id));
}

/** A step to create `pending`: what the runbook step resolved to for this member (domain's prepareStepExecution). */
export interface PendingStep extends PreparedExecution {
  readonly batchId: number;
  readonly phaseExecutionId: number;
  readonly batchMemberId: number;
}

/** Rows per statement: one jsonb parameter each, so the size is bounded by memory, not bind parameters. */
const PENDING_STEPS_PER_STATEMENT = 5_000;

/**
 * Creates pending steps (a phase's 50,000 for 10,000 members × 5 steps): each chunk travels as
 * ONE jsonb parameter, typed by `jsonb_to_recordset`, instead of 17 bind parameters per row that
 * the query builder would compile. A step that exists for (phase, member, step index) is skipped,
 * which makes a duplicate phase-due harmless. Returns how many rows were inserted.
 */
export async function createPendingSteps(db: Db, rows: readonly PendingStep[]): Promise<number> {
  let inserted = 0;
  for (let offset = 0; offset < rows.length; offset += PENDING_STEPS_PER_STATEMENT) {
    const chunk = rows.slice(offset, offset + PENDING_STEPS_PER_STATEMENT).map((row) => ({
      batch_id: row.batchId,
      phase_execution_id: row.phaseExecutionId,
      batch_member_id: row.batchMemberId,
      step_name: row.stepName,
      step_index: row.stepIndex,
      worker_id: row.workerId,
      function_name: row.functionName,
      params_json: row.paramsJson,
      params_resolved: row.paramsResolved,
      is_poll_step: row.isPollStep,
      poll_interval_sec: row.pollIntervalSec,
      poll_timeout_sec: row.pollTimeoutSec,
      on_failure: row.onFailure,
      max_retries: row.maxRetries,
      retry_interval_sec: row.retryIntervalSec,
      timeout_sec: row.timeoutSec,
    }));
    const result = await sql`
      INSERT INTO step_executions (batch_id, phase_execution_id, batch_member_id, step_name, step_index,
        worker_id, function_name, params_json, params_resolved, is_poll_step, poll_interval_sec,
        poll_timeout_sec, on_failure, max_retries, retry_interval_sec, timeout_sec)
      SELECT batch_id, phase_execution_id, batch_member_id, step_name, step_index,
        worker_id, function_name, params_json, params_resolved, is_poll_step, poll_interval_sec,
        poll_timeout_sec, on_failure, max_retries, retry_interval_sec, timeout_sec
      FROM jsonb_to_recordset(${JSON.stringify(chunk)}::jsonb) AS r(batch_id bigint, phase_execution_id bigint,
        batch_member_id bigint, step_name text, step_index int, worker_id text, function_name text,
        params_json jsonb, params_resolved boolean, is_poll_step boolean, poll_interval_sec int,
        poll_timeout_sec int, on_failure text, max_retries int, retry_interval_sec int, timeout_sec int)
      ORDER BY batch_member_id, step_index
      ON CONFLICT (phase_execution_id, batch_member_id, step_index, item_index) DO NOTHING`.execute(db);
    inserted += Number(result.numAffectedRows ?? 0n);
  }
  return inserted;
}

/** Active members of the batch with an id above `afterId`, by id: one chunk of a phase's start. */
export async function listActiveMembersAfter(
  db: Db,
  batchId: number,
  afterId: number,
  limit: number,
): Promise<BatchMember[]> {
  return db
    .selectFrom("batchMembers")
    .selectAll()
    .where("batchId", "=", batchId)
    .where("status", "=", "active")
    .where("id", ">", afterId)
    .orderBy("id")
    .limit(limit)
    .execute();
}

/** The last chunk of the phase's steps is committed with this (see migration 0008). */
export async function markPhaseStepsCreated(db: Db, phaseExecutionId: number, at: Date): Promise<void> {
  await db
    .updateTable("phaseExecutions")
    .set({ stepsCreatedAt: at })
    .where("id", "=", phaseExecutionId)
    .where("stepsCreatedAt", "is", null)
    .execute();
}

/** Whether the phase has any step at all (one index probe). */
export async function phaseHasAnySteps(db: Db, phaseExecutionId: number): Promise<boolean> {
  const row = await db
    .selectFrom("stepExecutions")
    .select("id")
    .where("phaseExecutionId", "=", phaseExecutionId)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

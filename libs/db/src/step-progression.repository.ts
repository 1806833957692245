import { sql } from "kysely";
import type { BatchWithRunbook } from "./batches.repository.ts";
import type { Db } from "./connection.ts";
import { createExecutionRepository } from "./execution-repository.ts";
import type { BatchMember } from "./members.table.ts";
import type { PhaseExecution } from "./phases.table.ts";
import type { StepExecution } from "./steps.table.ts";

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

export interface MemberPhase {
  readonly memberId: number;
  readonly phaseExecutionId: number;
}

/** Every step of each (member, phase) pair, by member then step index. */
export async function listStepsOfMemberPhases(
  db: Db,
  pairs: readonly MemberPhase[],
): Promise<StepExecution[]> {
  if (pairs.length === 0) return [];
  return db
    .selectFrom("stepExecutions")
    .selectAll()
    .where(({ eb, refTuple, tuple }) =>
      eb(
        refTuple("batchMemberId", "phaseExecutionId"),
        "in",
        pairs.map((pair) => tuple(pair.memberId, pair.phaseExecutionId)),
      ),
    )
    .orderBy("batchMemberId")
    .orderBy("stepIndex")
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

import { memberMachine } from "@matoolkit/domain";
import { sql } from "kysely";
import type { Db } from "./connection.ts";
import { createExecutionRepository } from "./execution-repository.ts";
import type { BatchMember } from "./members.table.ts";
import type { StepExecution } from "./steps.table.ts";
import { applyTransition } from "./transition.ts";

/**
 * The SQL of an operator's redrive (issue 12, POST /api/batches/{id}/redrive): failed members back
 * to `active` and their failed steps back to `pending`, each through its state machine's `redrive`
 * event, set-based (one statement per table however many members), with the operator as actor.
 * The admin API's redrive command composes these in one transaction, under the batch's lock.
 */

const steps = createExecutionRepository<StepExecution>({ table: "step_executions", entity: "step" });

/** Phases whose steps can be redriven: they have run. Pending, skipped or superseded ones have no steps; cancelled ones belong to a cancelled batch. */
const PHASES_THAT_RAN = ["dispatched", "completed", "failed"] as const;

export interface RedriveOptions {
  /** The operator (events.actor). */
  readonly actor: string;
  readonly reason: string;
}

/** The batch's members among `ids` (any status), by id; ids of other batches are simply absent. */
export async function getBatchMembersByIds(
  db: Db,
  batchId: number,
  ids: readonly number[],
): Promise<BatchMember[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom("batchMembers")
    .selectAll()
    .where("batchId", "=", batchId)
    .where(sql<boolean>`id = ANY(${sql.val([...new Set(ids)])}::bigint[])`)
    .orderBy("id")
    .execute();
}

/** Every failed member of the batch, by id. */
export async function listFailedMembers(db: Db, batchId: number): Promise<BatchMember[]> {
  return db
    .selectFrom("batchMembers")
    .selectAll()
    .where("batchId", "=", batchId)
    .where("status", "=", "failed")
    .orderBy("id")
    .execute();
}

/**
 * failed → active for these members of the batch (memberMachine `redrive`), one statement with one
 * event each. Returns the members that moved: one that is no longer failed is left alone.
 */
export async function redriveMembers(
  db: Db,
  batchId: number,
  memberIds: readonly number[],
  options: RedriveOptions,
): Promise<BatchMember[]> {
  if (memberIds.length === 0) return [];
  const { from, to } = memberMachine.transitions.redrive;
  return applyTransition<BatchMember>(
    db,
    {
      table: "batch_members",
      entity: "member",
      batchIdColumn: "batch_id",
      from,
      to,
      // As transitionMember's `redrive` (members.repository.ts): the failure is history now.
      set: { failed_at: null },
      reason: options.reason,
      actor: options.actor,
    },
    sql`batch_id = ${batchId} AND id = ANY(${sql.val([...memberIds])}::bigint[])`,
  );
}

/**
 * The members' steps that ended without succeeding (failed, poll_timeout, and cancelled: the
 * member's failure cancelled its open steps in every phase) in phases that have run → pending, in
 * one statement (executionMachine `redrive`: redrive_count + 1, retries and polls from zero, the
 * last run's job id and outcome cleared). Succeeded steps stay: the member resumes at its failure.
 */
export function redriveStepsOfMembers(
  db: Db,
  batchId: number,
  memberIds: readonly number[],
  options: RedriveOptions,
): Promise<StepExecution[]> {
  if (memberIds.length === 0) return Promise.resolve([]);
  const phases = sql.join(PHASES_THAT_RAN.map((status) => sql`${status}::text`));
  return steps.transitionWhere(
    db,
    sql`batch_id = ${batchId}
      AND batch_member_id = ANY(${sql.val([...memberIds])}::bigint[])
      AND phase_execution_id IN (
        SELECT id FROM phase_executions WHERE batch_id = ${batchId} AND status IN (${phases})
      )`,
    "redrive",
    { actor: options.actor, reason: options.reason },
  );
}

/**
 * How many times each member has been redriven, counting its `failed → active` events (the one
 * just written included): the n of its member-redriven message id, unique per redrive.
 */
export async function countMemberRedrives(
  db: Db,
  batchId: number,
  memberIds: readonly number[],
): Promise<Map<number, number>> {
  if (memberIds.length === 0) return new Map();
  const result = await sql<{ entity_id: string | number; redrives: number }>`
    SELECT entity_id, count(*)::int AS redrives
    FROM events
    WHERE batch_id = ${batchId} AND entity = 'member'
      AND from_status = 'failed' AND to_status = 'active'
      AND entity_id = ANY(${sql.val([...memberIds])}::bigint[])
    GROUP BY entity_id
  `.execute(db);
  return new Map(result.rows.map((row) => [Number(row.entity_id), row.redrives]));
}

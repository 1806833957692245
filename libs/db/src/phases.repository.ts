import { phaseMachine, type PhaseApproval, type PhaseEvent } from "@matoolkit/domain";
import { sql, type RawBuilder } from "kysely";
import { toColumnNames } from "./camel-case.ts";
import type { Db } from "./connection.ts";
import type { PhaseExecution, PhaseExecutionUpdate } from "./phases.table.ts";
import { applyTransition } from "./transition.ts";

export interface NewPhaseInput {
  readonly phaseName: string;
  readonly sequence: number;
  readonly offsetMinutes: number;
  readonly dueAt: Date | null;
  readonly runbookVersion: number;
  /** The runbook phase's `approval: required` gate (issue 30); absent: the phase runs when due. */
  readonly approval?: PhaseApproval | undefined;
}

/**
 * Creates pending phase executions. A phase already created for the same batch and runbook version
 * is skipped, so the result holds only the rows actually inserted.
 */
export async function insertPhases(
  db: Db,
  batchId: number,
  phases: readonly NewPhaseInput[],
): Promise<PhaseExecution[]> {
  if (phases.length === 0) return [];
  return db
    .insertInto("phaseExecutions")
    .values(phases.map(({ approval, ...phase }) => ({ batchId, ...phase, ...approvalColumns(approval) })))
    .onConflict((conflict) => conflict.columns(["batchId", "phaseName", "runbookVersion"]).doNothing())
    .returningAll()
    .execute();
}

export async function getPhase(db: Db, id: number): Promise<PhaseExecution | undefined> {
  return db.selectFrom("phaseExecutions").selectAll().where("id", "=", id).executeTakeFirst();
}

/**
 * Reads a phase and locks its row until the transaction ends. phase-due and member-added both
 * decide, from the phase's steps and the batch's members, which members still need steps in it;
 * locked, they take turns, so each sees what the other committed.
 */
export async function getPhaseForUpdate(db: Db, id: number): Promise<PhaseExecution | undefined> {
  return db.selectFrom("phaseExecutions").selectAll().where("id", "=", id).forUpdate().executeTakeFirst();
}

/** The gate as stored on the row: copied once, so every later decision reads the row alone. */
function approvalColumns(approval: PhaseApproval | undefined) {
  if (approval === undefined) return { approvalRequired: false };
  return {
    approvalRequired: true,
    approvalTimeoutSeconds: approval.timeoutSeconds ?? null,
    approvalTimeoutOutcome: approval.timeoutSeconds === undefined ? null : approval.timeoutOutcome,
  };
}

/** In runbook order. */
export async function listPhases(db: Db, batchId: number): Promise<PhaseExecution[]> {
  return db
    .selectFrom("phaseExecutions")
    .selectAll()
    .where("batchId", "=", batchId)
    .orderBy("sequence")
    .orderBy("id")
    .execute();
}

/**
 * Applies `event` to every phase matching `where` that is in one of its source states (one
 * statement, one event row each); the phases that moved are returned.
 */
function transitionPhasesWhere(
  db: Db,
  where: RawBuilder<unknown>,
  event: PhaseEvent,
  options: PhaseTransitionOptions,
): Promise<PhaseExecution[]> {
  const { from, to } = phaseMachine.transitions[event];
  return applyTransition<PhaseExecution>(
    db,
    {
      table: "phase_executions",
      entity: "phase",
      batchIdColumn: "batch_id",
      from,
      to,
      set: { ...defaultColumns(event), ...toColumnNames(options.set ?? {}) },
      reason: options.reason,
      actor: options.actor,
    },
    where,
  );
}

/** Applies `event` if the phase is in one of its source states; undefined when it is not. */
export async function transitionPhase(
  db: Db,
  id: number,
  event: PhaseEvent,
  options: PhaseTransitionOptions = {},
): Promise<PhaseExecution | undefined> {
  const [row] = await transitionPhasesWhere(db, sql`id = ${id}`, event, options);
  return row;
}

export interface PhaseTransitionOptions {
  readonly reason?: string;
  /** The operator whose request this is (events.actor); omitted for the system's own changes. */
  readonly actor?: string;
  /** Stamped when the phase ends (complete, fail): how it went for its members. */
  readonly set?: Pick<PhaseExecutionUpdate, "outcome" | "succeededMembers" | "failedMembers">;
}

/** Batch cancel: every pending or dispatched phase of the batch → cancelled, one event each. */
export function cancelOpenPhasesOfBatch(db: Db, batchId: number, reason: string): Promise<PhaseExecution[]> {
  return transitionPhasesWhere(db, sql`batch_id = ${batchId}`, "cancel", { reason });
}

function defaultColumns(event: PhaseEvent): Record<string, unknown> {
  switch (event) {
    case "dispatch":
      return { dispatched_at: sql`now()` };
    case "complete":
    case "fail":
    case "cancel":
      return { completed_at: sql`now()` };
    case "skip":
    case "supersede":
      return {};
    case "await_approval":
      // The timeout's clock starts now; the batch workflow's timer wakes at this time.
      return {
        approval_expires_at: sql`CASE WHEN target.approval_timeout_seconds IS NULL THEN NULL
          ELSE now() + make_interval(secs => target.approval_timeout_seconds) END`,
      };
    case "approve":
      return { dispatched_at: sql`now()`, approval_decision: "approved" };
    case "reject":
      // Ended without sending anything: no member went through it, none failed in it.
      return {
        completed_at: sql`now()`,
        approval_decision: "rejected",
        outcome: "failed",
        succeeded_members: 0,
        failed_members: 0,
      };
    case "reopen":
      // Ends again once the redriven members are done, with the outcome of that end.
      return { completed_at: null, outcome: null, succeeded_members: null, failed_members: null };
    default: {
      const unreachable: never = event;
      throw new Error(`unknown phase event ${String(unreachable)}`);
    }
  }
}

/**
 * Whether a phase before `sequence` (runbook order) waits for approval: the later phases of the
 * batch wait behind it (issue 30), so a cutover gate cannot be overtaken by the phase after it.
 */
export async function hasEarlierPhaseAwaitingApproval(
  db: Db,
  batchId: number,
  sequence: number,
): Promise<boolean> {
  const row = await db
    .selectFrom("phaseExecutions")
    .select("id")
    .where("batchId", "=", batchId)
    .where("sequence", "<", sequence)
    .where("status", "=", "awaiting_approval")
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** A pending phase of an automated batch that has fallen due, with what phase-due needs. */
export type DuePhase = PhaseExecution & { runbookName: string };

/**
 * 000 "Automated Batch Lifecycle" step 9: pending phases with due_at <= now of the runbook's
 * automated batches that are `active` (phases wait while init runs), in batch and runbook order.
 */
export async function listDuePhases(db: Db, runbookName: string, now: Date): Promise<DuePhase[]> {
  return db
    .selectFrom("phaseExecutions")
    .innerJoin("batches", "batches.id", "phaseExecutions.batchId")
    .innerJoin("runbooks", "runbooks.id", "batches.runbookId")
    .selectAll("phaseExecutions")
    .select("runbooks.name as runbookName")
    .where("runbooks.name", "=", runbookName)
    .where("batches.isManual", "=", false)
    .where("batches.status", "=", "active")
    .where("phaseExecutions.status", "=", "pending")
    .where("phaseExecutions.dueAt", "<=", now)
    .orderBy("phaseExecutions.batchId")
    .orderBy("phaseExecutions.sequence")
    .orderBy("phaseExecutions.id")
    .execute();
}

/** Version transition: the batch's pending phases of versions before `version` become superseded. */
export function supersedePendingPhases(db: Db, batchId: number, version: number): Promise<PhaseExecution[]> {
  return transitionPhasesWhere(db, sql`batch_id = ${batchId} AND runbook_version < ${version}`, "supersede", {
    reason: `superseded by runbook version ${version}`,
  });
}

/** overdue_behavior `ignore`: the version's pending phases already due at `now` become skipped. */
export function skipPhasesDueBy(
  db: Db,
  batchId: number,
  version: number,
  now: Date,
): Promise<PhaseExecution[]> {
  return transitionPhasesWhere(
    db,
    sql`batch_id = ${batchId} AND runbook_version = ${version} AND due_at <= ${now}`,
    "skip",
    { reason: "past due at version transition (overdue_behavior ignore)" },
  );
}

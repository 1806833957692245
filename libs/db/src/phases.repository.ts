import { phaseMachine, type PhaseEvent } from "@matoolkit/domain";
import { sql } from "kysely";
import type { Db } from "./connection.ts";
import type { PhaseExecution } from "./phases.table.ts";
import { applyTransition } from "./transition.ts";

export interface NewPhaseInput {
  readonly phaseName: string;
  readonly sequence: number;
  readonly offsetMinutes: number;
  readonly dueAt: Date | null;
  readonly runbookVersion: number;
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
    .values(phases.map((phase) => ({ batchId, ...phase })))
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

/** Applies `event` if the phase is in one of its source states; undefined when it is not. */
export async function transitionPhase(
  db: Db,
  id: number,
  event: PhaseEvent,
  options: { readonly reason?: string } = {},
): Promise<PhaseExecution | undefined> {
  const { from, to } = phaseMachine.transitions[event];
  const [row] = await applyTransition<PhaseExecution>(
    db,
    {
      table: "phase_executions",
      entity: "phase",
      batchIdColumn: "batch_id",
      from,
      to,
      set: defaultColumns(event),
      reason: options.reason,
    },
    sql`id = ${id}`,
  );
  return row;
}

function defaultColumns(event: PhaseEvent): Record<string, unknown> {
  switch (event) {
    case "dispatch":
      return { dispatched_at: sql`now()` };
    case "complete":
    case "fail":
      return { completed_at: sql`now()` };
    case "skip":
    case "supersede":
      return {};
    default: {
      const unreachable: never = event;
      throw new Error(`unknown phase event ${String(unreachable)}`);
    }
  }
}

import { sql } from "kysely";
import type { Db } from "./connection.ts";

/**
 * What a phase's windowed start reads (issue 29; services/orchestrator handlers/phase-due.ts):
 * how far its step creation has gone, how many of its steps are out with a worker, and which
 * phases have not finished creating their steps. Each is one statement on an index the hot path
 * already has.
 */

/**
 * The highest member id with steps in the phase (0 when none): phase-due creates steps by member
 * id, so the next chunk starts after it. One backward probe of the unique key
 * (phase_execution_id, batch_member_id, step_index, item_index).
 */
export async function lastMemberWithPhaseSteps(db: Db, phaseExecutionId: number): Promise<number> {
  const { rows } = await sql<{ last: string | null }>`
    SELECT max(batch_member_id) AS last FROM step_executions WHERE phase_execution_id = ${phaseExecutionId}
  `.execute(db);
  return Number(rows[0]?.last ?? 0);
}

/**
 * The phase's steps handed to a worker and not answered yet (`dispatched`), counted up to `limit`:
 * the caller only asks whether the window is full. Reads the open-steps partial index
 * (step_executions_open_idx, migration 0022), which holds only the open steps of members already
 * started, and tests the status on those rows.
 */
export async function countDispatchedPhaseSteps(
  db: Db,
  phaseExecutionId: number,
  limit: number,
): Promise<number> {
  const { rows } = await sql<{ count: string }>`
    SELECT count(*) AS count FROM (
      SELECT 1 FROM step_executions
      WHERE phase_execution_id = ${phaseExecutionId} AND is_open AND status = 'dispatched'
      LIMIT ${limit}
    ) AS window_steps
  `.execute(db);
  return Number(rows[0]?.count ?? 0);
}

/**
 * Phases of active batches still creating their steps (`dispatched`, `steps_created_at` unset),
 * by id after `afterId`: the reconcile pass gives each a chance to go on, in case the results that
 * would have moved it were processed by a process that stopped before it could.
 */
export async function listPhasesStillStarting(
  db: Db,
  page: { afterId: number; limit: number },
): Promise<number[]> {
  const { rows } = await sql<{ id: string }>`
    SELECT p.id FROM phase_executions p JOIN batches b ON b.id = p.batch_id
    WHERE p.status = 'dispatched' AND p.steps_created_at IS NULL AND b.status = 'active'
      AND p.id > ${page.afterId}
    ORDER BY p.id
    LIMIT ${page.limit}
  `.execute(db);
  return rows.map((row) => Number(row.id));
}

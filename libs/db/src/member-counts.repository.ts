import { memberMachine, type MemberStatus } from "@matoolkit/domain";
import { sql } from "kysely";
import type { Db } from "./connection.ts";

/**
 * How a phase went for its members, so partial success is visible: a member succeeded in a phase
 * when every one of its steps there succeeded; failed when any failed or timed out polling;
 * cancelled when any was cancelled and none failed; running otherwise (still pending, dispatched,
 * polling, or waiting for a retry).
 */
export interface PhaseMemberCounts {
  readonly succeeded: number;
  readonly failed: number;
  readonly cancelled: number;
  readonly running: number;
}

export type BatchMemberCounts = Readonly<Record<MemberStatus, number>>;

export interface BatchCounts {
  /** Members by status, every status present (0 when none). */
  readonly members: BatchMemberCounts;
  /** Keyed by phase execution id; a phase without steps yet is absent. */
  readonly phases: ReadonlyMap<number, PhaseMemberCounts>;
}

export const noPhaseMembers: PhaseMemberCounts = { succeeded: 0, failed: 0, cancelled: 0, running: 0 };

interface CountsRow {
  members: Record<string, number> | null;
  phases: Array<{ phase_id: number } & PhaseMemberCounts> | null;
}

/**
 * Member counts of a batch and of each of its phases in ONE aggregate statement: the database
 * groups the steps by phase and member, and only the counts travel, never the steps.
 */
export async function countBatchMembers(db: Db, batchId: number): Promise<BatchCounts> {
  const result = await sql<CountsRow>`
    WITH per_member AS (
      SELECT phase_execution_id,
        bool_and(status = 'succeeded') AS all_succeeded,
        bool_or(status IN ('failed', 'poll_timeout')) AS any_failed,
        bool_or(status = 'cancelled') AS any_cancelled
      FROM step_executions
      WHERE batch_id = ${batchId}
      GROUP BY phase_execution_id, batch_member_id
    ), per_phase AS (
      SELECT phase_execution_id AS phase_id,
        count(*) FILTER (WHERE all_succeeded) AS succeeded,
        count(*) FILTER (WHERE any_failed) AS failed,
        count(*) FILTER (WHERE any_cancelled AND NOT any_failed) AS cancelled,
        count(*) FILTER (WHERE NOT all_succeeded AND NOT any_failed AND NOT any_cancelled) AS running
      FROM per_member
      GROUP BY phase_execution_id
    )
    SELECT
      (SELECT json_object_agg(status, n) FROM (
        SELECT status, count(*) AS n FROM batch_members WHERE batch_id = ${batchId} GROUP BY status
      ) AS by_status) AS members,
      (SELECT json_agg(per_phase) FROM per_phase) AS phases
  `.execute(db);
  const row = result.rows[0];
  const members = Object.fromEntries(
    memberMachine.states.map((status) => [status, row?.members?.[status] ?? 0]),
  ) as Record<MemberStatus, number>;
  const phases = new Map<number, PhaseMemberCounts>(
    (row?.phases ?? []).map(({ phase_id, succeeded, failed, cancelled, running }) => [
      phase_id,
      { succeeded, failed, cancelled, running },
    ]),
  );
  return { members, phases };
}

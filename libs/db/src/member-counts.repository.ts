import { memberMachine, type BatchStatus, type MemberStatus } from "@matoolkit/domain";
import { sql } from "kysely";
import type { Db } from "./connection.ts";

/**
 * How a phase went for its members, so partial success is visible: a member succeeded in a phase
 * when every one of its steps there succeeded or was skipped, at least one succeeded; skipped when
 * `when:` skipped every one (issue 30: the phase did nothing for it, and it is through); failed
 * when any failed or timed out polling; cancelled when any was cancelled and none failed; running
 * otherwise (still pending, dispatched, polling, or waiting for a retry).
 */
export interface PhaseMemberCounts {
  readonly succeeded: number;
  readonly skipped: number;
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
  /**
   * The batch's status in the same snapshot as the counts; undefined when there is no such batch.
   * Once a batch has ended, its phase counts are final (see phase-counts-cache.ts in the admin API).
   */
  readonly batchStatus: BatchStatus | undefined;
}

export const noPhaseMembers: PhaseMemberCounts = {
  succeeded: 0,
  skipped: 0,
  failed: 0,
  cancelled: 0,
  running: 0,
};

interface CountsRow {
  batch_status: BatchStatus | null;
  members: Record<string, number> | null;
  phases: Array<{ phase_id: number } & PhaseMemberCounts> | null;
}

/**
 * Member counts of a batch and of each of its phases in ONE aggregate statement: the database
 * groups the steps by phase and member, and only the counts travel, never the steps. A member's
 * outcome in a phase is its worst step there (3 failed or timed out polling, 2 cancelled, 1 not
 * terminal yet, 0 succeeded, -1 skipped): one max() per step instead of three boolean aggregates. The
 * batch's steps are found through `step_executions_batch_id_idx` and grouped by hash, their status
 * read from the rows: no index holds the status, so a step's dispatch changes no index (migration
 * 0022), and no index is kept for this read alone (migration 0024: 27 ms for a batch of
 * 10,000 members × 5 steps, with or without the one it had).
 */
export async function countBatchMembers(db: Db, batchId: number): Promise<BatchCounts> {
  const result = await sql<CountsRow>`
    WITH per_member AS (
      SELECT phase_execution_id,
        max(CASE status
          WHEN 'skipped' THEN -1 WHEN 'succeeded' THEN 0 WHEN 'cancelled' THEN 2
          WHEN 'failed' THEN 3 WHEN 'poll_timeout' THEN 3
          ELSE 1 END) AS outcome
      FROM step_executions
      WHERE batch_id = ${batchId}
      GROUP BY phase_execution_id, batch_member_id
    ), per_phase AS (
      SELECT phase_execution_id AS phase_id,
        count(*) FILTER (WHERE outcome = 0) AS succeeded,
        count(*) FILTER (WHERE outcome = -1) AS skipped,
        count(*) FILTER (WHERE outcome = 3) AS failed,
        count(*) FILTER (WHERE outcome = 2) AS cancelled,
        count(*) FILTER (WHERE outcome = 1) AS running
      FROM per_member
      GROUP BY phase_execution_id
    )
    SELECT
      (SELECT status FROM batches WHERE id = ${batchId}) AS batch_status,
      (${membersByStatus(batchId)}) AS members,
      (SELECT json_agg(per_phase) FROM per_phase) AS phases
  `.execute(db);
  const row = result.rows[0];
  const phases = new Map<number, PhaseMemberCounts>(
    (row?.phases ?? []).map(({ phase_id, succeeded, skipped, failed, cancelled, running }) => [
      phase_id,
      { succeeded, skipped, failed, cancelled, running },
    ]),
  );
  return { members: everyStatus(row?.members ?? null), phases, batchStatus: row?.batch_status ?? undefined };
}

/**
 * Members by status of several batches in one statement (a page of the batch list), keyed by
 * batch id; every id asked for is present, with zeros when it has no members or does not exist.
 */
export async function countMembersByStatusOfBatches(
  db: Db,
  batchIds: readonly number[],
): Promise<Map<number, BatchMemberCounts>> {
  const counted = new Map<number, Record<string, number>>(batchIds.map((id) => [id, {}]));
  if (batchIds.length > 0) {
    const result = await sql<{ batch_id: number; status: string; n: number }>`
      SELECT batch_id, status, count(*)::int AS n FROM batch_members
      WHERE batch_id = ANY(${[...batchIds]}::int[])
      GROUP BY batch_id, status
    `.execute(db);
    for (const row of result.rows) counted.get(row.batch_id)![row.status] = row.n;
  }
  return new Map([...counted].map(([id, byStatus]) => [id, everyStatus(byStatus)]));
}

/** Only the members by status, for a caller that has the phase counts (one batch of the above). */
export async function countMembersByStatus(db: Db, batchId: number): Promise<BatchMemberCounts> {
  return (await countMembersByStatusOfBatches(db, [batchId])).get(batchId)!;
}

function membersByStatus(batchId: number) {
  return sql`SELECT json_object_agg(status, n) FROM (
    SELECT status, count(*) AS n FROM batch_members WHERE batch_id = ${batchId} GROUP BY status
  ) AS by_status`;
}

function everyStatus(counted: Record<string, number> | null): BatchMemberCounts {
  return Object.fromEntries(memberMachine.states.map((status) => [status, counted?.[status] ?? 0])) as Record<
    MemberStatus,
    number
  >;
}

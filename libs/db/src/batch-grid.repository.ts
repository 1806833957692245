import type { ExecutionStatus, MemberStatus } from "@matoolkit/domain";
import { sql } from "kysely";
import type { Db } from "./connection.ts";

/** One member of a status grid page with the current row of each of its steps. */
export interface BatchGridMember {
  readonly id: number;
  readonly memberKey: string;
  readonly status: MemberStatus;
  readonly failedAt: Date | null;
  readonly steps: readonly BatchGridStep[];
}

/** What a grid cell shows: the step's status and, on hover, its error and counters. */
export interface BatchGridStep {
  readonly id: number;
  readonly phaseName: string;
  readonly stepName: string;
  readonly status: ExecutionStatus;
  readonly errorCode: string | null;
  /** Stored sanitized (the orchestrator sanitizes worker errors before writing them). */
  readonly errorMessage: string | null;
  readonly retryCount: number;
  readonly pollCount: number;
  readonly redriveCount: number;
  readonly completedAt: Date | null;
  /** A for_each step (issue 30): how many values it has for the member; null on other steps. */
  readonly itemCount: number | null;
  /** Of those, how many are done (succeeded or skipped); 0 on other steps. */
  readonly itemsDone: number;
}

/**
 * One offset page of a batch's members (id order) with their steps of every phase, in ONE query,
 * for the dashboard's member × step grid (GET /api/batches/{id}/grid). Offset rather than keyset:
 * a virtualised grid jumps to any row index (a scrollbar drag), and a batch's members are at
 * most tens of thousands, read through the (batch_id, id) index. As in readBatchReportPage, a step
 * has one row per phase execution and the newest runbook version's row is the one shown. A
 * for_each step (issue 30) has a row per value: the cell shows the one that matters most (a failed
 * value before one running, before one waiting, before one done) with the values done so far.
 */
export async function readBatchGridPage(
  db: Db,
  batchId: number,
  page: { readonly offset: number; readonly limit: number },
  /** Only members in this status (the grid's filter); offsets count within them. */
  memberStatus?: MemberStatus,
): Promise<BatchGridMember[]> {
  // `batch_id = ANY(ARRAY[$1])`: see listMembersPage (the planner then takes the (batch_id, id) index).
  let selected = db
    .selectFrom("batchMembers")
    .select(["id", "memberKey", "status", "failedAt"])
    .where(sql<boolean>`batch_id = ANY(${sql.val([batchId])}::int[])`);
  if (memberStatus !== undefined) selected = selected.where("status", "=", memberStatus);
  const members = selected.orderBy("batchId").orderBy("id").limit(page.limit).offset(page.offset).as("m");
  const rows = await db
    .selectFrom(members)
    .leftJoinLateral(
      (eb) =>
        eb
          .selectFrom("stepExecutions as s")
          .innerJoin("phaseExecutions as p", "p.id", "s.phaseExecutionId")
          .select([
            "s.id as stepId",
            "p.phaseName",
            "s.stepName",
            "s.status as stepStatus",
            "s.errorCode",
            "s.errorMessage",
            "s.retryCount",
            "s.pollCount",
            "s.redriveCount",
            "s.completedAt",
            "s.itemCount",
            sql<number>`count(*) FILTER (WHERE s.status IN ('succeeded', 'skipped'))
              OVER (PARTITION BY s.phase_execution_id, s.step_name)::int`.as("itemsDone"),
          ])
          .distinctOn(["p.phaseName", "s.stepName"])
          .whereRef("s.batchMemberId", "=", "m.id")
          .orderBy("p.phaseName")
          .orderBy("s.stepName")
          .orderBy("p.runbookVersion", "desc")
          .orderBy("p.id", "desc")
          .orderBy(valueWorthShowing)
          .orderBy("s.id", "desc")
          .as("st"),
      (join) => join.onTrue(),
    )
    .select([
      "m.id",
      "m.memberKey",
      "m.status",
      "m.failedAt",
      "st.stepId",
      "st.phaseName",
      "st.stepName",
      "st.stepStatus",
      "st.errorCode",
      "st.errorMessage",
      "st.retryCount",
      "st.pollCount",
      "st.redriveCount",
      "st.completedAt",
      "st.itemCount",
      "st.itemsDone",
    ])
    .orderBy("m.id")
    .execute();
  const grouped: (Omit<BatchGridMember, "steps"> & { steps: BatchGridStep[] })[] = [];
  for (const row of rows) {
    let member = grouped.at(-1);
    if (member?.id !== row.id) {
      member = {
        id: row.id,
        memberKey: row.memberKey,
        status: row.status,
        failedAt: row.failedAt,
        steps: [],
      };
      grouped.push(member);
    }
    if (row.stepId === null || row.phaseName === null || row.stepName === null || row.stepStatus === null)
      continue;
    member.steps.push({
      id: row.stepId,
      phaseName: row.phaseName,
      stepName: row.stepName,
      status: row.stepStatus,
      errorCode: row.errorCode,
      errorMessage: row.errorMessage,
      retryCount: row.retryCount ?? 0,
      pollCount: row.pollCount ?? 0,
      redriveCount: row.redriveCount ?? 0,
      completedAt: row.completedAt,
      itemCount: row.itemCount ?? null,
      itemsDone: row.itemCount === null ? 0 : (row.itemsDone ?? 0),
    });
  }
  return grouped;
}

/**
 * Which of a for_each step's rows a cell (or a report column) shows: the first by this order. One
 * row per phase execution on other steps, so it changes nothing there.
 */
export const valueWorthShowing = sql`CASE s.status
  WHEN 'failed' THEN 0 WHEN 'poll_timeout' THEN 0
  WHEN 'polling' THEN 1 WHEN 'dispatched' THEN 1
  WHEN 'pending' THEN 2 WHEN 'cancelled' THEN 3 ELSE 4 END`;

/** Members that finished within one second, by how they finished. */
export interface MemberFinishBucket {
  readonly at: Date;
  readonly succeeded: number;
  readonly failed: number;
}

/**
 * When the batch's members finished, per second, oldest first (GET /api/batches/{id}/progress): a
 * failed member at its failed_at; an active member once every step of its runbook version
 * (`stepsPerMember` distinct phase/step names) has succeeded or been skipped (its `when:`, issue
 * 30; a for_each step once all its values have), at its last step's completion.
 * Removed members never finish. One aggregate over the batch's steps: ~50,000 rows for 10,000
 * members × 5 steps, read through step_executions (batch_member_id, status).
 */
export async function readMemberFinishes(
  db: Db,
  batchId: number,
  stepsPerMember: number,
): Promise<MemberFinishBucket[]> {
  const result = await sql<{ at: Date; succeeded: number; failed: number }>`
    SELECT date_trunc('second', finished_at) AS at,
           count(*) FILTER (WHERE outcome = 'succeeded')::int AS succeeded,
           count(*) FILTER (WHERE outcome = 'failed')::int AS failed
    FROM (
      SELECT CASE WHEN m.status = 'failed' THEN 'failed' ELSE 'succeeded' END AS outcome,
             CASE WHEN m.status = 'failed' THEN m.failed_at ELSE s.last_completed END AS finished_at
      FROM batch_members m
      LEFT JOIN LATERAL (
        SELECT max(last_completed) AS last_completed,
               count(DISTINCT (phase_name, step_name)) FILTER (WHERE all_ok) AS ok
        FROM (
          -- one row per step per phase execution: a for_each step's values all done (issue 30)
          SELECT pe.phase_name, se.step_name, max(se.completed_at) AS last_completed,
                 bool_and(se.status IN ('succeeded', 'skipped')) AS all_ok
          FROM step_executions se
          JOIN phase_executions pe ON pe.id = se.phase_execution_id
          WHERE se.batch_member_id = m.id
          GROUP BY pe.id, pe.phase_name, se.step_name
        ) per_step
      ) s ON true
      WHERE m.batch_id = ${batchId}
        AND (m.status = 'failed' OR (m.status = 'active' AND ${stepsPerMember} > 0 AND s.ok >= ${stepsPerMember}))
    ) finished
    WHERE finished_at IS NOT NULL
    GROUP BY 1
    ORDER BY 1
  `.execute(db);
  return result.rows;
}

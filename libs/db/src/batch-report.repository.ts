import type { ExecutionStatus, MemberStatus } from "@matoolkit/domain";
import { sql } from "kysely";
import { valueWorthShowing } from "./batch-grid.repository.ts";
import type { Db } from "./connection.ts";

/** One member of a batch report page with the current row of each of its steps. */
export interface BatchReportMember {
  readonly id: number;
  readonly memberKey: string;
  readonly status: MemberStatus;
  readonly steps: readonly BatchReportStep[];
}

export interface BatchReportStep {
  readonly phaseName: string;
  readonly stepName: string;
  readonly status: ExecutionStatus;
  readonly errorCode: string | null;
  readonly completedAt: Date | null;
}

/**
 * One keyset page of a batch's members (id order, after `afterMemberId`) with their steps of every
 * phase, in ONE query, for the streamed status report (GET /api/batches/{id}/report.csv): the
 * members come through the (batch_id, id) index (migration 0007) and each member's steps through
 * step_executions (batch_member_id, status). A step has one row per phase execution (a retry or a
 * redrive reruns that row in place, so it is the current run); when a runbook version change gave
 * the phase a newer phase execution, the newest version's row is the one reported.
 */
export async function readBatchReportPage(
  db: Db,
  batchId: number,
  page: { readonly afterMemberId: number; readonly limit: number },
): Promise<BatchReportMember[]> {
  // `batch_id = ANY(ARRAY[$1])` as in listMembersPage: a plain equality lets the planner walk the
  // primary key instead of the (batch_id, id) index (see members.repository.ts).
  const members = db
    .selectFrom("batchMembers")
    .select(["id", "memberKey", "status"])
    .where(sql<boolean>`batch_id = ANY(${sql.val([batchId])}::int[])`)
    .where("id", ">", page.afterMemberId)
    .orderBy("batchId")
    .orderBy("id")
    .limit(page.limit)
    .as("m");
  const rows = await db
    .selectFrom(members)
    .leftJoinLateral(
      (eb) =>
        eb
          .selectFrom("stepExecutions as s")
          .innerJoin("phaseExecutions as p", "p.id", "s.phaseExecutionId")
          .select(["p.phaseName", "s.stepName", "s.status as stepStatus", "s.errorCode", "s.completedAt"])
          .distinctOn(["p.phaseName", "s.stepName"])
          .whereRef("s.batchMemberId", "=", "m.id")
          .orderBy("p.phaseName")
          .orderBy("s.stepName")
          .orderBy("p.runbookVersion", "desc")
          .orderBy("p.id", "desc")
          // A for_each step's values (issue 30): the one that matters most, as the grid shows it.
          .orderBy(valueWorthShowing)
          .orderBy("s.id", "desc")
          .as("st"),
      (join) => join.onTrue(),
    )
    .select([
      "m.id",
      "m.memberKey",
      "m.status",
      "st.phaseName",
      "st.stepName",
      "st.stepStatus",
      "st.errorCode",
      "st.completedAt",
    ])
    .orderBy("m.id")
    .execute();
  const grouped: { id: number; memberKey: string; status: MemberStatus; steps: BatchReportStep[] }[] = [];
  for (const row of rows) {
    let member = grouped.at(-1);
    if (member?.id !== row.id) {
      member = { id: row.id, memberKey: row.memberKey, status: row.status, steps: [] };
      grouped.push(member);
    }
    if (row.phaseName !== null && row.stepName !== null && row.stepStatus !== null) {
      member.steps.push({
        phaseName: row.phaseName,
        stepName: row.stepName,
        status: row.stepStatus,
        errorCode: row.errorCode,
        completedAt: row.completedAt,
      });
    }
  }
  return grouped;
}

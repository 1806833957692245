import {
  countMembersByStatus,
  getBatchWithRunbook,
  readBatchGridPage,
  readMemberFinishes,
  type Db,
} from "@matoolkit/db";
import { parseRunbookOrThrow, type MemberStatus } from "@matoolkit/domain";
import { batchSecretPolicy, secretsOfMemberIds } from "./batch-secrets.ts";
import { maskText } from "./mask-rows.ts";

/** A column of the grid: one step of one phase, in runbook order. */
export interface GridColumn {
  readonly phaseName: string;
  readonly stepName: string;
}

/**
 * The batch's runbook version, phases and steps in runbook order: the grid's columns, and how
 * many steps a member must have succeeded to be through. Undefined when there is no such batch.
 */
async function batchColumns(db: Db, batchId: number): Promise<GridColumn[] | undefined> {
  const batch = await getBatchWithRunbook(db, batchId);
  if (batch === undefined) return undefined;
  return parseRunbookOrThrow(batch.yamlContent).phases.flatMap((phase) =>
    phase.steps.map((step) => ({ phaseName: phase.name, stepName: step.name })),
  );
}

function totalOf(counts: Readonly<Record<string, number>>): number {
  return Object.values(counts).reduce((sum, n) => sum + n, 0);
}

/**
 * GET /api/batches/{id}/grid: the columns, the member total (the grid's row count: every status,
 * removed included, or those in `memberStatus`) and one page of members with their steps, the
 * members' secret values masked in error messages and codes (issue 25). Undefined when there is
 * no batch.
 */
export async function batchGrid(
  db: Db,
  batchId: number,
  page: { readonly offset: number; readonly limit: number },
  memberStatus?: MemberStatus,
) {
  const [columns, counts, members, policy] = await Promise.all([
    batchColumns(db, batchId),
    countMembersByStatus(db, batchId),
    readBatchGridPage(db, batchId, page, memberStatus),
    batchSecretPolicy(db, batchId),
  ]);
  if (columns === undefined) return undefined;
  const memberTotal = memberStatus === undefined ? totalOf(counts) : counts[memberStatus];
  const secrets = await secretsOfMemberIds(
    db,
    policy,
    // Only members with an error to show: their values are all the grid can leak.
    members
      .filter((member) => member.steps.some((step) => step.errorMessage !== null || step.errorCode !== null))
      .map((member) => member.id),
  );
  const masked = members.map((member) => ({
    ...member,
    steps: member.steps.map((step) => ({
      ...step,
      errorCode: step.errorCode === null ? null : maskText(secrets, member.id, step.errorCode),
      errorMessage: step.errorMessage === null ? null : maskText(secrets, member.id, step.errorMessage),
    })),
  }));
  return { batchId, memberTotal, offset: page.offset, columns, members: masked };
}

/**
 * GET /api/batches/{id}/progress: members finished over time, cumulative, one point per second in
 * which some finished (see readMemberFinishes for when a member counts as finished).
 */
export async function batchProgress(db: Db, batchId: number) {
  const columns = await batchColumns(db, batchId);
  if (columns === undefined) return undefined;
  const [counts, buckets] = await Promise.all([
    countMembersByStatus(db, batchId),
    readMemberFinishes(db, batchId, columns.length),
  ]);
  let succeeded = 0;
  let failed = 0;
  const points = buckets.map((bucket) => {
    succeeded += bucket.succeeded;
    failed += bucket.failed;
    return { at: bucket.at, succeeded, failed };
  });
  return { batchId, memberTotal: totalOf(counts) - counts.removed, points };
}

import {
  countMembersByStatus,
  getBatchWithRunbook,
  readBatchGridPage,
  readMemberFinishes,
  type Db,
} from "@matoolkit/db";
import { parseRunbookOrThrow, type MemberStatus } from "@matoolkit/domain";

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
 * removed included, or those in `memberStatus`) and one page of members with their steps.
 * Undefined when there is no batch.
 */
export async function batchGrid(
  db: Db,
  batchId: number,
  page: { readonly offset: number; readonly limit: number },
  memberStatus?: MemberStatus,
) {
  const [columns, counts, members] = await Promise.all([
    batchColumns(db, batchId),
    countMembersByStatus(db, batchId),
    readBatchGridPage(db, batchId, page, memberStatus),
  ]);
  if (columns === undefined) return undefined;
  const memberTotal = memberStatus === undefined ? totalOf(counts) : counts[memberStatus];
  return { batchId, memberTotal, offset: page.offset, columns, members };
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

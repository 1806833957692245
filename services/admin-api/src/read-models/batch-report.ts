import { getBatchWithRunbook, readBatchReportPage, type BatchReportMember, type Db } from "@matoolkit/db";
import { parseRunbookOrThrow } from "@matoolkit/domain";
import { csvRecord } from "../csv/csv-cells.ts";
import { batchSecretPolicy, secretsOfMemberIds, type BatchSecrets } from "./batch-secrets.ts";
import { maskText } from "./mask-rows.ts";

/** Members read per query: 500 members × a few steps is a few thousand rows, a few hundred kB. */
export const REPORT_PAGE_SIZE = 500;

interface ReportColumn {
  readonly phaseName: string;
  readonly stepName: string;
}

/**
 * GET /api/batches/{id}/report.csv: one row per member (id order), a status, error code and finish
 * time column per step of the batch's runbook version, phases and steps in runbook order. Undefined
 * when the batch does not exist, checked before the first byte so that can still be a 404.
 *
 * The rows are generated page by page (`REPORT_PAGE_SIZE` members and their steps per query) as
 * the consumer asks for them: nothing holds more than one page, however large the batch, and a
 * consumer that stops (a client gone) stops the reading. Each page is read when it is reached,
 * so a running batch's report is not one snapshot: every row is consistent in itself. A member's
 * secret values are masked in its cells (issue 25).
 */
export async function batchReport(
  db: Db,
  batchId: number,
  options: { readonly pageSize?: number } = {},
): Promise<AsyncIterable<string> | undefined> {
  const batch = await getBatchWithRunbook(db, batchId);
  if (batch === undefined) return undefined;
  const runbook = parseRunbookOrThrow(batch.yamlContent);
  const columns: ReportColumn[] = runbook.phases.flatMap((phase) =>
    phase.steps.map((step) => ({ phaseName: phase.name, stepName: step.name })),
  );
  return reportLines(db, batchId, columns, batch.externalRef, options.pageSize ?? REPORT_PAGE_SIZE);
}

async function* reportLines(
  db: Db,
  batchId: number,
  columns: readonly ReportColumn[],
  externalRef: string | null,
  pageSize: number,
): AsyncGenerator<string> {
  yield csvRecord([
    "member id",
    "member key",
    "member status",
    ...columns.flatMap(({ phaseName, stepName }) => [
      `${phaseName}/${stepName} status`,
      `${phaseName}/${stepName} error`,
      `${phaseName}/${stepName} finished`,
    ]),
    // Last, so readers of the columns before it by position are unchanged (issue 31).
    "external ref",
  ]);
  const policy = await batchSecretPolicy(db, batchId);
  let afterMemberId = 0;
  for (;;) {
    const page = await readBatchReportPage(db, batchId, { afterMemberId, limit: pageSize });
    const secrets = await secretsOfMemberIds(
      db,
      policy,
      // Only members with an error code: the one cell a worker's text reaches.
      page
        .filter((member) => member.steps.some((step) => step.errorCode !== null))
        .map((member) => member.id),
    );
    // One chunk per page: a write per row would cost a syscall per member.
    if (page.length > 0) {
      yield page.map((member) => memberRecord(member, columns, secrets, externalRef)).join("");
    }
    if (page.length < pageSize) return;
    afterMemberId = page.at(-1)!.id;
  }
}

function memberRecord(
  member: BatchReportMember,
  columns: readonly ReportColumn[],
  secrets: BatchSecrets,
  externalRef: string | null,
): string {
  const steps = new Map(member.steps.map((step) => [`${step.phaseName}\u0000${step.stepName}`, step]));
  return csvRecord([
    member.id,
    member.memberKey,
    member.status,
    ...columns.flatMap(({ phaseName, stepName }) => {
      const step = steps.get(`${phaseName}\u0000${stepName}`);
      // No row: the phase has not created the member's steps yet (or the member joined later).
      const errorCode =
        step?.errorCode == null ? step?.errorCode : maskText(secrets, member.id, step.errorCode);
      return [step?.status, errorCode, step?.completedAt?.toISOString()];
    }),
    externalRef,
  ]);
}

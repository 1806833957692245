import { SPECIAL_VARIABLES, templateVariablesIn, type RunbookDefinition } from "@matoolkit/domain";

/**
 * GET /api/runbooks/{name}/template (000 "Download CSV template"): the header row of a member CSV
 * the runbook can run, in this order: the primary key, the batch time column (if the runbook
 * groups by one), the multi-valued columns it declares, the `columns` it declares for `when:`
 * conditions (which read nothing else but outputs and specials, issue 30), the
 * external_ref_column (issue 31: a manual batch's change ticket, when the upload gives none), then every other
 * variable its member steps reference (phases, on_member_removed, rollbacks; function names
 * included), sorted.
 * Left out: the special variables (`_batch_id`, `_batch_start_time`) and the variables that
 * steps' output_params fill in from worker results. Init steps can only use special variables.
 */
export function templateColumns(runbook: RunbookDefinition): string[] {
  const outputs = new Set(memberSteps(runbook).flatMap((step) => Object.keys(step.outputParams)));
  const special = new Set<string>(SPECIAL_VARIABLES);
  const referenced = templateVariablesIn(
    memberSteps(runbook).flatMap((step) => [step.function, step.params]),
  ).filter((name) => !special.has(name) && !outputs.has(name));
  const { dataSource } = runbook;
  const columns = [
    dataSource.primaryKey,
    ...(dataSource.batchTimeColumn === undefined ? [] : [dataSource.batchTimeColumn]),
    ...dataSource.multiValuedColumns.map((column) => column.name),
    ...(dataSource.columns ?? []),
    ...(dataSource.externalRefColumn === undefined ? [] : [dataSource.externalRefColumn]),
    ...referenced,
  ];
  return [...new Set(columns)];
}

/** One header line (RFC 4180: CRLF, fields quoted when they hold a comma, quote or line break). */
export function csvHeaderLine(columns: readonly string[]): string {
  return `${columns.map(csvField).join(",")}\r\n`;
}

function csvField(value: string): string {
  return /[",\r\n]|^\s|\s$/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

function memberSteps(runbook: RunbookDefinition) {
  return [
    ...runbook.phases.flatMap((phase) => phase.steps),
    ...runbook.onMemberRemoved,
    ...Object.values(runbook.rollbacks).flat(),
  ];
}

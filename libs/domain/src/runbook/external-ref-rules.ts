import { isSecretName } from "./mask-secrets.ts";
import type { RunbookDefinition } from "./model.ts";
import type { Finding } from "./problems.ts";
import type { RawMapping } from "./raw.ts";
import { asList, isMapping } from "./raw.ts";
import { secretPolicyOf } from "./secret-policy.ts";

/**
 * `data_source.external_ref_column` (issue 31): its value becomes the batch's externalRef, which
 * every role reads and webhooks carry. So it must never name a column whose value is secret or
 * personal (the primary key is the member key: one member's key as the batch's label), and must
 * hold one value per member, not a list. Refused at the column's name, with its line and column.
 */
export function externalRefFindings(root: RawMapping): Finding[] {
  const source = root.data_source;
  if (!isMapping(source) || typeof source.external_ref_column !== "string") return [];
  const column = source.external_ref_column;
  const problem = problemOf(column, source);
  return problem === undefined ? [] : [{ path: ["data_source", "external_ref_column"], message: problem }];
}

function problemOf(column: string, source: RawMapping): string | undefined {
  const reason = "its value is shown to every role and sent in webhooks";
  if (column === source.primary_key) {
    return `external_ref_column cannot be the primary key "${column}": a batch's reference would be one member's key`;
  }
  if (asList(source.secret_columns).includes(column)) {
    return `external_ref_column "${column}" is a secret column; ${reason}`;
  }
  if (isSecretName(column)) return `external_ref_column "${column}" looks secret by its name; ${reason}`;
  const multiValued = asList(source.multi_valued_columns).some(
    (entry) => isMapping(entry) && entry.name === column,
  );
  if (multiValued) {
    return `external_ref_column "${column}" is a multi-valued column; a batch has one reference`;
  }
  return undefined;
}

/**
 * The column a batch's externalRef is read from, or undefined: none configured, or one the
 * runbook's secret policy counts as secret (a secret param's template uses it), which publish
 * cannot see from the name alone. A secret is never copied into a field every role reads.
 */
export function externalRefColumnOf(runbook: RunbookDefinition): string | undefined {
  const column = runbook.dataSource.externalRefColumn;
  if (column === undefined) return undefined;
  return secretPolicyOf([runbook]).isSecretVariable(column) ? undefined : column;
}

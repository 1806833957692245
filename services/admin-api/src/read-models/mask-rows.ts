import {
  MASKED,
  maskMemberData,
  memberSecretValues,
  SecretValues,
  type SecretPolicy,
} from "@matoolkit/domain";
import type { BatchSecrets } from "./batch-secrets.ts";

/**
 * Rows as the read routes show them, secrets masked (issue 25): one function per row shape, all
 * built on the domain's SecretPolicy and SecretValues. Each returns a copy.
 */

interface MemberRow {
  readonly id: number;
  readonly dataJson: Readonly<Record<string, unknown>>;
  readonly workerDataJson: Readonly<Record<string, unknown>>;
}

/** GET …/members: secret columns and outputs `***`, the member's secret values masked elsewhere. */
export function maskMemberRow<T extends MemberRow>(secrets: BatchSecrets, member: T): T {
  const values = secrets.valuesOf(member.id);
  return {
    ...member,
    dataJson: maskMemberData(secrets.policy, values, member.dataJson),
    workerDataJson: maskMemberData(secrets.policy, values, member.workerDataJson),
  };
}

/** A data source row not yet a member (the query preview): masked with its own secret values. */
export function maskSourceRow(
  policy: SecretPolicy,
  data: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  return maskMemberData(policy, memberSecretValues(policy, { dataJson: data, workerDataJson: {} }), data);
}

interface ExecutionRow {
  readonly stepName: string;
  readonly functionName: string;
  readonly paramsJson: Readonly<Record<string, unknown>>;
  readonly resultJson: unknown;
  readonly errorMessage: string | null;
  readonly errorCode: string | null;
}

/**
 * A step or init execution: params masked as the plan masks them (names, markers, templates
 * using secret variables), and every value masked there, with the member's secret values, is
 * then masked wherever else it appears: results, error message and code, function name.
 * `isOpen` is left out: the storage's index key (migration 0022), which `status` already tells.
 */
export function maskExecutionRow<T extends ExecutionRow & { readonly isOpen?: boolean }>(
  secrets: BatchSecrets,
  memberId: number | null,
  { isOpen: _storageOnly, ...row }: T,
): Omit<T, "isOpen"> {
  const params = secrets.policy.maskParams(row.stepName, row.paramsJson);
  const values = secrets.valuesOf(memberId).union(SecretValues.of(maskedAway(row.paramsJson, params)));
  return {
    ...row,
    functionName: values.maskText(row.functionName),
    paramsJson: values.mask(params) as Record<string, unknown>,
    resultJson: values.mask(row.resultJson),
    errorMessage: row.errorMessage === null ? null : values.maskText(row.errorMessage),
    errorCode: row.errorCode === null ? null : values.maskText(row.errorCode),
  };
}

/** Text (an event reason, an error) with the member's secret values masked. */
export function maskText(secrets: BatchSecrets, memberId: number | null, text: string): string {
  return secrets.valuesOf(memberId).maskText(text);
}

/** The values `masked` hides where `original` had them: secret for the execution they belong to. */
function maskedAway(original: unknown, masked: unknown): unknown[] {
  if (masked === MASKED && original !== MASKED) return [original];
  if (Array.isArray(original) && Array.isArray(masked)) {
    return original.flatMap((item, index) => maskedAway(item, masked[index]));
  }
  if (isRecord(original) && isRecord(masked)) {
    return Object.entries(original).flatMap(([name, item]) => maskedAway(item, masked[name]));
  }
  return [];
}

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

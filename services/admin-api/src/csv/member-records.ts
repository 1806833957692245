import { MemberDataError, serializeMemberData, type DataSourceConfig } from "@matoolkit/domain";

/**
 * The checks every uploaded member row goes through, whatever the format (CSV line, JSON array
 * element): a primary key, no key twice in one upload, multi-valued columns that split. `where`
 * says where the row came from (a CSV line number, a JSON path) so problems can point at it;
 * problems never quote a value (member data is PII).
 */
export interface MemberRecord<Where> {
  readonly record: Readonly<Record<string, unknown>>;
  readonly where: Where;
}

export interface UploadedMember<Where> {
  readonly memberKey: string;
  readonly data: Record<string, unknown>;
  readonly where: Where;
}

export interface RecordProblem<Where> {
  readonly where: Where;
  readonly message: string;
}

/**
 * Member keys are indexed, and PostgreSQL refuses an index entry over ~2.7 kB (a 500 before):
 * 512 characters fit even at 4 UTF-8 bytes each, and no real key (UPN, email) comes close.
 */
export const maxMemberKeyLength = 512;

export function membersFromRecords<Where>(
  records: readonly MemberRecord<Where>[],
  dataSource: DataSourceConfig,
  describe: (where: Where) => string,
): { members: UploadedMember<Where>[]; problems: RecordProblem<Where>[] } {
  const checker = createMemberChecker(dataSource, describe);
  const members: UploadedMember<Where>[] = [];
  for (const { record, where } of records) {
    const member = checker.check(record, where);
    if (member !== undefined) members.push(member);
  }
  return { members, problems: checker.problems };
}

/**
 * The same checks one record at a time, for uploads read as a stream: `check` answers the member,
 * or undefined after noting the problem. Only the keys seen are kept (for duplicates), not the rows.
 */
export interface MemberChecker<Where> {
  check(record: Readonly<Record<string, unknown>>, where: Where): UploadedMember<Where> | undefined;
  readonly problems: RecordProblem<Where>[];
}

export function createMemberChecker<Where>(
  dataSource: DataSourceConfig,
  describe: (where: Where) => string,
): MemberChecker<Where> {
  const problems: RecordProblem<Where>[] = [];
  const seen = new Map<string, Where>();
  const refuse = (where: Where, message: string) => {
    problems.push({ where, message });
    return undefined;
  };
  return {
    problems,
    check(record, where) {
      const key = keyOf(record[dataSource.primaryKey]);
      if (key === undefined)
        return refuse(where, `primary key '${dataSource.primaryKey}' must be text or a number`);
      if (key === "") return refuse(where, `empty primary key '${dataSource.primaryKey}'`);
      if (key.length > maxMemberKeyLength) {
        return refuse(
          where,
          `primary key '${dataSource.primaryKey}' is longer than ${maxMemberKeyLength} characters`,
        );
      }
      const first = seen.get(key);
      if (first !== undefined) return refuse(where, `duplicate primary key (same as ${describe(first)})`);
      seen.set(key, where);
      try {
        return { memberKey: key, data: serializeMemberData(record, dataSource.multiValuedColumns), where };
      } catch (error) {
        if (!(error instanceof MemberDataError)) throw error;
        return refuse(where, error.message);
      }
    },
  };
}

/** Keys are stored as text (batch_members.member_key), as the scheduler stores a source's keys. */
function keyOf(value: unknown): string | undefined {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value.trim();
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return undefined;
}

import type { Db } from "@matoolkit/db";
import { memberSecretValues, SecretValues, type SecretPolicy } from "@matoolkit/domain";
import { batchSecretPolicy } from "./batch-secrets.ts";

/** A member as the change log is matched against: its key and the names its data gives it. */
export interface MemberNames {
  readonly batchId: number;
  readonly memberKey: string;
  /** Lowercased: the key, every UPN/address/id in its data and outputs, each address's local part. */
  readonly names: ReadonlySet<string>;
  /** Lowercased addresses (with an `@`), looked for inside a change's detail. */
  readonly addresses: readonly string[];
}

/** The most members the attribution reads: the change log is a rehearsal's, batches are small. */
const MAX_MEMBERS = 10_000;

/**
 * The names under which a member's objects appear in the tenant: its UPNs and addresses (staging
 * and final), their local parts (Exchange names a mail user after it), and ids a step returned.
 */
export function memberNames(
  batchId: number,
  memberKey: string,
  values: readonly Record<string, unknown>[],
): MemberNames {
  const names = new Set<string>([memberKey.toLowerCase()]);
  const addresses: string[] = [];
  for (const value of values.flatMap((record) => Object.values(record))) {
    if (typeof value !== "string" || value.trim().length < 3) continue;
    const text = value.trim().toLowerCase();
    if (/^[^\s@]+@[^\s@]+$/u.test(text)) {
      names.add(text);
      names.add(text.slice(0, text.indexOf("@")));
      addresses.push(text);
    } else if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/u.test(text)) {
      names.add(text);
    }
  }
  if (memberKey.includes("@")) addresses.push(memberKey.toLowerCase());
  return { batchId, memberKey, names, addresses };
}

/**
 * The member a change is about: the one whose name is the changed object, else the one whose
 * address the change names (a group membership change names the user in its detail).
 */
export function memberOfChange(
  change: { readonly target: string; readonly detail: string },
  members: readonly MemberNames[],
): MemberNames | undefined {
  const target = change.target.toLowerCase();
  const byTarget = members.find((member) => member.names.has(target));
  if (byTarget !== undefined) return byTarget;
  const detail = change.detail.toLowerCase();
  return members.find((member) =>
    member.addresses.some((address) =>
      new RegExp(`(^|[\\s"=:,])${escape(address)}($|[\\s",;])`, "u").test(detail),
    ),
  );
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/gu, "\\$&");
}

export interface TenantChangeMembers {
  readonly members: readonly MemberNames[];
  /**
   * The known secret values of those members (their runbooks' secret columns and outputs): a
   * step may have written one to the tenant, and the change log shows values as written.
   */
  readonly secrets: SecretValues;
}

/** The members to attribute changes to (one batch's, or the newest of every batch) and their secrets. */
export async function membersForAttribution(
  db: Db,
  batchId: number | undefined,
): Promise<TenantChangeMembers> {
  let query = db
    .selectFrom("batchMembers")
    .select(["batchId", "memberKey", "dataJson", "workerDataJson"])
    .orderBy("id", "desc")
    .limit(MAX_MEMBERS);
  if (batchId !== undefined) query = query.where("batchId", "=", batchId);
  const rows = await query.execute();
  const policies = new Map<number, SecretPolicy>();
  for (const id of new Set(rows.map((row) => row.batchId))) policies.set(id, await batchSecretPolicy(db, id));
  let secrets = SecretValues.none;
  const members = rows.map((row) => {
    const policy = policies.get(row.batchId)!;
    secrets = secrets.union(memberSecretValues(policy, row));
    // A secret column never names a member's object (and is never matched on).
    const shown = (data: Readonly<Record<string, unknown>>) =>
      Object.fromEntries(Object.entries(data).filter(([name]) => !policy.isSecretVariable(name)));
    return memberNames(row.batchId, row.memberKey, [shown(row.dataJson), shown(row.workerDataJson)]);
  });
  return { members, secrets };
}

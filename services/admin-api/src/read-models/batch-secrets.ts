import {
  listMemberSecretSources,
  listRunbookVersions,
  listRunbookVersionsOfBatch,
  type Db,
} from "@matoolkit/db";
import {
  memberSecretValues,
  parseRunbookOrThrow,
  secretPolicyOf,
  SecretValues,
  type RunbookDefinition,
  type SecretPolicy,
} from "@matoolkit/domain";

/**
 * Issue 25: what a batch's reads must hide. Every read model of a batch (members, steps, events,
 * grid, report, audit) masks with the policy of its runbook (secret-policy.ts in the domain, the
 * one shared function) and the known secret values of the members it shows. Masking happens here,
 * on the way out: what is stored, and what the worker gets, is never changed.
 */
export interface BatchSecrets {
  readonly policy: SecretPolicy;
  /** The member's known secret values; none for a member not loaded (init executions). */
  valuesOf(memberId: number | null): SecretValues;
}

/** Parsed versions by their YAML (a batch's reads parse the same few versions again and again). */
const parsedVersions = new Map<string, RunbookDefinition>();
const MAX_CACHED_VERSIONS = 256;

/** The policy of every version of the batch's runbook; the name list alone without a batch. */
export async function batchSecretPolicy(db: Db, batchId: number): Promise<SecretPolicy> {
  const versions = await listRunbookVersionsOfBatch(db, batchId);
  return secretPolicyOf(versions.map(({ yamlContent }) => parsedVersion(yamlContent)));
}

/** The policy and the secret values of `memberIds` (members of the batch). */
export async function batchSecrets(
  db: Db,
  batchId: number,
  memberIds: readonly number[],
): Promise<BatchSecrets> {
  const [policy, members] = await Promise.all([
    batchSecretPolicy(db, batchId),
    listMemberSecretSources(db, memberIds),
  ]);
  return secretsOfMembers(policy, members);
}

/** The policy of every version of a runbook (the query preview's rows belong to no batch yet). */
export async function runbookSecretPolicy(db: Db, runbookName: string): Promise<SecretPolicy> {
  const versions = await listRunbookVersions(db, runbookName);
  return secretPolicyOf(versions.map(({ yamlContent }) => parsedVersion(yamlContent)));
}

/** The secret values of `memberIds` under a policy already read (a report reads it once). */
export async function secretsOfMemberIds(
  db: Db,
  policy: SecretPolicy,
  memberIds: readonly number[],
): Promise<BatchSecrets> {
  return secretsOfMembers(policy, await listMemberSecretSources(db, memberIds));
}

/** Secrets of members already read (with their data), e.g. a page of GET …/members. */
export function secretsOfMembers(
  policy: SecretPolicy,
  members: readonly {
    readonly id: number;
    readonly dataJson: Readonly<Record<string, unknown>>;
    readonly workerDataJson: Readonly<Record<string, unknown>>;
  }[],
): BatchSecrets {
  const values = new Map(members.map((member) => [member.id, memberSecretValues(policy, member)]));
  return {
    policy,
    valuesOf: (memberId) => (memberId === null ? undefined : values.get(memberId)) ?? SecretValues.none,
  };
}

function parsedVersion(yamlContent: string): RunbookDefinition {
  let parsed = parsedVersions.get(yamlContent);
  if (parsed === undefined) {
    parsed = parseRunbookOrThrow(yamlContent);
    if (parsedVersions.size >= MAX_CACHED_VERSIONS)
      parsedVersions.delete(parsedVersions.keys().next().value!);
    parsedVersions.set(yamlContent, parsed);
  }
  return parsed;
}

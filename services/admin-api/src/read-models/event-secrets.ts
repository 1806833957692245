import { listEventMembers, type Db } from "@matoolkit/db";
import { memberSecretValues, SecretValues, type SecretPolicy } from "@matoolkit/domain";
import { batchSecretPolicy } from "./batch-secrets.ts";

interface EventRow {
  readonly entity: string;
  readonly entityId: number;
  readonly reason: string | null;
}

/**
 * Events (a batch's timeline, the audit trail) with the secret values of the member they are
 * about masked in their reason (issue 25). Reasons are codes and a few words, but a worker's
 * error code reaches them, so they are masked like any other read; events of several batches
 * (audit) are masked each with its own batch's policy.
 */
export async function maskEventReasons<T extends EventRow>(
  db: Db,
  events: readonly T[],
  /** The batch's policy when every event is of one batch (its timeline), read beforehand. */
  knownPolicy?: { readonly batchId: number; readonly policy: SecretPolicy },
): Promise<T[]> {
  const withReason = events.filter((event) => event.reason !== null);
  const idsOf = (entity: string) =>
    withReason.filter((event) => event.entity === entity).map((event) => event.entityId);
  const { members, memberOfStep } = await listEventMembers(db, {
    memberIds: idsOf("member"),
    stepIds: idsOf("step"),
  });
  const memberOf = (event: EventRow): number | undefined =>
    event.entity === "member"
      ? event.entityId
      : event.entity === "step"
        ? memberOfStep.get(event.entityId)
        : undefined;
  const policies = new Map(knownPolicy === undefined ? [] : [[knownPolicy.batchId, knownPolicy.policy]]);
  for (const batchId of new Set(members.map((member) => member.batchId))) {
    if (!policies.has(batchId)) policies.set(batchId, await batchSecretPolicy(db, batchId));
  }
  const values = new Map(
    members.map((member) => [member.id, memberSecretValues(policies.get(member.batchId)!, member)]),
  );
  return events.map((event) => {
    const memberId = memberOf(event);
    const secrets = (memberId === undefined ? undefined : values.get(memberId)) ?? SecretValues.none;
    return event.reason === null ? event : { ...event, reason: secrets.maskText(event.reason) };
  });
}

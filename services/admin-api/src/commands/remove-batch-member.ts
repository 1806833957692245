import { memberRemovedMessage } from "@matoolkit/commands";
import { enqueueOutbox, getMember, lockBatch, transitionMember, type Db } from "@matoolkit/db";
import { batchMachine, type MemberStatus } from "@matoolkit/domain";
import { conflict, notFound } from "../http/api-error.ts";

export interface RemoveMemberResult {
  readonly batchId: number;
  readonly memberId: number;
  readonly status: "removed";
  readonly removedAt: Date | null;
  /** True when the member had been removed before this request: nothing was done this time. */
  readonly alreadyRemoved: boolean;
}

/**
 * DELETE /api/batches/{id}/members/{memberId} (000 "Member Removal Protocol"): the member becomes
 * `removed` (guarded transition, with its event) and the member-removed message is queued in the
 * same transaction; the orchestrator then cancels the member's open steps and sends the runbook's
 * on_member_removed steps.
 *
 * - a member id that is not in this batch answers 404, as an unknown one does: the resource
 *   /batches/{id}/members/{memberId} does not exist, and nothing is written;
 * - already removed: 200 with alreadyRemoved, no second message (a retried DELETE is harmless);
 * - a failed member: 409 (its steps were already cancelled when it failed; nothing to remove);
 * - an automated batch: 409, its members follow the data source (a member removed here would
 *   come back as a new member at the next scheduler tick, and run its steps again);
 * - a batch that has ended: 409, the removal would only send on_member_removed jobs after the fact.
 */
export async function removeBatchMemberCommand(
  db: Db,
  batchId: number,
  memberId: number,
  actor: string,
): Promise<RemoveMemberResult> {
  return db.transaction().execute(async (trx) => {
    // Shared lock: a concurrent cancel waits for this removal (or ends the batch before we look).
    const batch = await lockBatch(trx, batchId, "share");
    if (batch === undefined) throw notFound(`batch ${batchId} does not exist`);
    const member = await getMember(trx, memberId);
    if (member === undefined || member.batchId !== batchId) {
      throw notFound(`batch ${batchId} has no member ${memberId}`);
    }
    if (member.status === "removed") return result(batchId, memberId, member.removedAt, true);
    if (!batch.isManual) {
      throw conflict(
        `batch ${batchId} is automated: its members follow the runbook's data source; remove the member there`,
      );
    }
    if (batchMachine.isTerminal(batch.status)) {
      throw conflict(`batch ${batchId} is ${batch.status}; members can only be removed from a running batch`);
    }
    if (member.status !== "active") throw notRemovable(memberId, member.status);
    const removed = await transitionMember(trx, memberId, "remove", {
      reason: "removed by operator",
      actor,
      announced: true,
    });
    if (removed === undefined) {
      // The orchestrator changed the member after we read it: answer from its committed status.
      const current = await getMember(trx, memberId);
      if (current?.status === "removed") return result(batchId, memberId, current.removedAt, true);
      throw notRemovable(memberId, current?.status ?? "failed");
    }
    await enqueueOutbox(trx, [
      memberRemovedMessage({ BatchId: batchId, MemberKey: removed.memberKey, BatchMemberId: removed.id }),
    ]);
    return result(batchId, memberId, removed.removedAt, false);
  });
}

function notRemovable(memberId: number, status: MemberStatus) {
  return conflict(`member ${memberId} is ${status}; only an active member can be removed`);
}

function result(batchId: number, memberId: number, removedAt: Date | null, alreadyRemoved: boolean) {
  return { batchId, memberId, status: "removed" as const, removedAt, alreadyRemoved };
}

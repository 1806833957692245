import { memberAddedMessage } from "@matoolkit/commands";
import {
  enqueueOutbox,
  findMembersHoldingKeys,
  getBatchWithRunbook,
  insertMembers,
  lockBatch,
  recordMembersAdded,
  type Batch,
  type BatchMember,
  type Db,
  type MemberKeyHolder,
} from "@matoolkit/db";
import { batchMachine, parseRunbookOrThrow } from "@matoolkit/domain";
import {
  describePosition,
  membersOfUpload,
  type MemberUpload,
  type PositionedMember,
} from "../csv/member-upload.ts";
import { conflict, notFound } from "../http/api-error.ts";
import type { RowLimit } from "../http/request-limits.ts";

const MAX_ROWS_IN_MESSAGE = 10;

export type AddedMember = Pick<BatchMember, "id" | "memberKey" | "status" | "addedAt">;

/**
 * POST /api/batches/{id}/members (000 "Add members from CSV"): late joiners of a running manual
 * batch, through the Member Catch-Up Protocol. The members and one member-added message each are
 * written in one transaction (outbox), so the orchestrator creates their steps for every phase
 * already dispatched; phases still pending include them when advanced. The rows are validated
 * against the runbook version the batch runs (not the latest), and nothing is written unless
 * every row is valid and no key is already in the batch. Each added member gets an audit event
 * naming `actor` (from_status null, to active), in the same transaction.
 *
 * Refused (409): automated batches (their members come from the data source, which would remove
 * an added member at the next tick) and batches that have ended (nothing would run the steps).
 * A key already in the batch, active or failed, is refused naming the row: a failed member is
 * not silently restarted, which would run its already-succeeded steps a second time.
 */
export async function addBatchMembersCommand(
  db: Db,
  batchId: number,
  upload: MemberUpload,
  actor: string,
  rowLimit: RowLimit,
): Promise<{ batchId: number; members: AddedMember[] }> {
  const batch = await getBatchWithRunbook(db, batchId);
  if (batch === undefined) throw notFound(`batch ${batchId} does not exist`);
  refuseUnlessOpenManual(batch);
  const members = await membersOfUpload(upload, parseRunbookOrThrow(batch.yamlContent).dataSource, rowLimit);
  return db.transaction().execute(async (trx) => {
    // Shared lock, as the orchestrator's handlers take it: a concurrent cancel either ends the
    // batch before we look (and we refuse) or waits and then cancels these members' steps too.
    const locked = await lockBatch(trx, batchId, "share");
    if (locked === undefined) throw notFound(`batch ${batchId} does not exist`);
    refuseUnlessOpenManual(locked);
    const keys = members.map((member) => member.memberKey);
    const holders = await findMembersHoldingKeys(trx, batchId, keys);
    if (holders.length > 0) throw alreadyMembers(batchId, members, holders);
    const inserted = await insertMembers(trx, batchId, members, { announced: true });
    if (inserted.length !== members.length) {
      // Another upload added one of the keys after our check; the rollback undoes ours.
      const ours = new Set(inserted.map((member) => member.id));
      const theirs = (await findMembersHoldingKeys(trx, batchId, keys)).filter((held) => !ours.has(held.id));
      throw alreadyMembers(batchId, members, theirs);
    }
    await recordMembersAdded(
      trx,
      batchId,
      inserted.map((member) => member.id),
      actor,
    );
    await enqueueOutbox(
      trx,
      inserted.map((member) =>
        memberAddedMessage({ BatchId: batchId, MemberKey: member.memberKey, BatchMemberId: member.id }),
      ),
    );
    return {
      batchId,
      members: inserted.map(({ id, memberKey, status, addedAt }) => ({ id, memberKey, status, addedAt })),
    };
  });
}

function refuseUnlessOpenManual(batch: Pick<Batch, "id" | "isManual" | "status">): void {
  if (!batch.isManual) {
    throw conflict(
      `batch ${batch.id} is automated: its members come from the runbook's data source; add them there`,
    );
  }
  if (batchMachine.isTerminal(batch.status)) {
    throw conflict(`batch ${batch.id} is ${batch.status}; members can only be added to a running batch`);
  }
}

/** Names the rows (line or JSON path), never the keys: member keys are UPNs, i.e. PII. */
function alreadyMembers(batchId: number, members: readonly PositionedMember[], holders: MemberKeyHolder[]) {
  const statusOf = new Map(holders.map((holder) => [holder.memberKey, holder.status]));
  const problems = members
    .filter((member) => statusOf.has(member.memberKey))
    .map((member) => ({
      ...member.where,
      message: `already a member of batch ${batchId} (${statusOf.get(member.memberKey)})`,
    }));
  // The message names the first few rows; `problems` lists them all.
  const shown = problems.slice(0, MAX_ROWS_IN_MESSAGE).map((problem) => describePosition(problem));
  const more = problems.length > shown.length ? ` and ${problems.length - shown.length} more` : "";
  return conflict(`${problems.length} member(s) already in batch ${batchId}: ${shown.join(", ")}${more}`, {
    problems,
  });
}

import { sql } from "kysely";
import type { Db } from "./connection.ts";
import type { BatchMember } from "./members.table.ts";

/**
 * Members an operator adds to or removes from a manual batch (admin API) follow the scheduler's
 * protocol: `insertMembers(…, {announced})` / `transitionMember(…, "remove", {announced})` stamp
 * add/remove_dispatched_at and the caller queues member-added / member-removed in the same
 * transaction. This module holds what only uploads need: which keys a batch already holds.
 */
export type MemberKeyHolder = Pick<BatchMember, "id" | "memberKey" | "status">;

/**
 * The members of `batchId` (active or failed, not removed) whose key is one of `keys`. One array
 * parameter, however many keys: a 100,000-row upload stays one statement under the bind limit.
 */
export async function findMembersHoldingKeys(
  db: Db,
  batchId: number,
  keys: readonly string[],
): Promise<MemberKeyHolder[]> {
  if (keys.length === 0) return [];
  return db
    .selectFrom("batchMembers")
    .select(["id", "memberKey", "status"])
    .where("batchId", "=", batchId)
    .where("status", "<>", "removed")
    .where("memberKey", "=", sql<string>`ANY(${[...keys]}::text[])`)
    .orderBy("id")
    .execute();
}

/**
 * The audit rows of members an operator added to a batch: one `member` event each (from_status
 * null: created, to `active`) naming the operator, in ONE statement however many members (one
 * array parameter), in the upload's transaction.
 */
export async function recordMembersAdded(
  db: Db,
  batchId: number,
  memberIds: readonly number[],
  actor: string,
): Promise<void> {
  if (memberIds.length === 0) return;
  await sql`
    INSERT INTO events (batch_id, entity, entity_id, from_status, to_status, reason, actor)
    SELECT ${batchId}::int, 'member', member_id, NULL, 'active', 'added by operator', ${actor}::text
    FROM unnest(${[...memberIds]}::int[]) AS added(member_id)
    ORDER BY member_id
  `.execute(db);
}

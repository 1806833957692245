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

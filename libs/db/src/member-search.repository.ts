import type { BatchStatus, MemberStatus } from "@matoolkit/domain";
import { sql } from "kysely";
import type { Db } from "./connection.ts";

/** One membership of a key: the batch, and the member row in it (a key removed and added back has two). */
export interface MemberBatchRow {
  readonly memberId: number;
  readonly memberKey: string;
  readonly memberStatus: MemberStatus;
  readonly addedAt: Date;
  readonly removedAt: Date | null;
  readonly failedAt: Date | null;
  /** When DELETE /api/members/{key} erased the row's data (migration 0019); the key stays. */
  readonly erasedAt: Date | null;
  readonly batchId: number;
  readonly batchStatus: BatchStatus;
  readonly isManual: boolean;
  readonly externalRef: string | null;
  readonly batchCreatedAt: Date;
  readonly runbookName: string;
  readonly runbookVersion: number;
}

/**
 * Every batch a member key is or was in (issue 31: "where is user X?"), newest batch first. The
 * key matches case-insensitively (UPNs and emails differ only in case for the same mailbox; the
 * index of migration 0018 is on lower(member_key)). Member data is not read: the answer names
 * where the key is and how it went there, nothing else about the person.
 */
export async function findMemberBatches(
  db: Db,
  key: string,
  page: { readonly limit: number; readonly offset: number },
): Promise<MemberBatchRow[]> {
  return db
    .selectFrom("batchMembers as m")
    .innerJoin("batches as b", "b.id", "m.batchId")
    .innerJoin("runbooks as r", "r.id", "b.runbookId")
    .select([
      "m.id as memberId",
      "m.memberKey",
      "m.status as memberStatus",
      "m.addedAt",
      "m.removedAt",
      "m.failedAt",
      "m.erasedAt",
      "b.id as batchId",
      "b.status as batchStatus",
      "b.isManual",
      "b.externalRef",
      "b.detectedAt as batchCreatedAt",
      "r.name as runbookName",
      "r.version as runbookVersion",
    ])
    .where(sql<string>`lower(m.member_key)`, "=", sql<string>`lower(${key})`)
    .orderBy("b.id", "desc")
    .orderBy("m.id", "desc")
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}

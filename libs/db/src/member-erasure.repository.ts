import { batchMachine } from "@matoolkit/domain";
import { sql } from "kysely";
import type { Db } from "./connection.ts";
import { shortReason } from "./events.repository.ts";

/**
 * Erasure of one person (issue 31 item 2, DELETE /api/members/{key}): the member's rows in every
 * batch lose their data and their steps' params, results, error messages and for_each values.
 * The key and the statuses stay: they are how the record, and the audit row of the erasure,
 * refer to the person.
 */

export interface MemberKeyRow {
  readonly memberId: number;
  readonly batchId: number;
  readonly batchStatus: string;
  readonly erasedAt: Date | null;
}

/** Every row of the key, in every batch, with its batch's status. */
export async function listMemberKeyRows(db: Db, memberKey: string): Promise<MemberKeyRow[]> {
  const result = await sql<{
    member_id: number;
    batch_id: number;
    batch_status: string;
    erased_at: Date | null;
  }>`
    SELECT m.id AS member_id, m.batch_id, b.status AS batch_status, m.erased_at
    FROM batch_members m JOIN batches b ON b.id = m.batch_id
    WHERE m.member_key = ${memberKey}
    ORDER BY m.id
  `.execute(db);
  return result.rows.map((row) => ({
    memberId: row.member_id,
    batchId: row.batch_id,
    batchStatus: row.batch_status,
    erasedAt: row.erased_at,
  }));
}

/** True when the batch is still running (not completed, failed or cancelled). */
export function isRunningBatchStatus(status: string): boolean {
  return !(batchMachine.terminal as readonly string[]).includes(status);
}

export interface ErasedMembers {
  /** Member rows erased now (not erased before). */
  readonly members: number;
  /** Step executions of those rows whose params, results or error messages were emptied. */
  readonly steps: number;
}

/**
 * Erases the key's rows (all of them: a row erased before is emptied again, harmless) and writes
 * one audit row per member row erased for the first time, all in the caller's transaction.
 */
export async function eraseMemberKey(db: Db, memberKey: string, actor: string): Promise<ErasedMembers> {
  const members = await sql<{ id: number; batch_id: number; status: string; first: boolean }>`
    WITH before AS (
      SELECT id, erased_at FROM batch_members WHERE member_key = ${memberKey} ORDER BY id FOR NO KEY UPDATE
    )
    UPDATE batch_members m SET data_json = '{}'::jsonb, worker_data_json = '{}'::jsonb,
      erased_at = coalesce(before.erased_at, now())
    FROM before WHERE m.id = before.id
    RETURNING m.id, m.batch_id, m.status, before.erased_at IS NULL AS first
  `.execute(db);
  const ids = members.rows.map((row) => row.id);
  if (ids.length === 0) return { members: 0, steps: 0 };
  const steps = await sql`
    UPDATE step_executions SET params_json = '{}'::jsonb, result_json = NULL, error_message = NULL,
      item_value = CASE WHEN item_value IS NULL THEN NULL ELSE 'null'::jsonb END
    WHERE batch_member_id = ANY(${ids}::int[])
      AND (params_json <> '{}'::jsonb OR result_json IS NOT NULL OR error_message IS NOT NULL
        OR (item_value IS NOT NULL AND item_value <> 'null'::jsonb))
  `.execute(db);
  const firstTime = members.rows.filter((row) => row.first);
  if (firstTime.length > 0) {
    await db
      .insertInto("events")
      .values(
        firstTime.map((row) => ({
          batchId: row.batch_id,
          entity: "member" as const,
          entityId: row.id,
          fromStatus: row.status,
          toStatus: row.status,
          reason: shortReason("personal data erased (data-subject request)"),
          actor,
        })),
      )
      .execute();
  }
  return { members: firstTime.length, steps: Number(steps.numAffectedRows ?? 0n) };
}

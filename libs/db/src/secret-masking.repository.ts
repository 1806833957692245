import { sql } from "kysely";
import { camelCaseRows } from "./camel-case.ts";
import type { JsonObject } from "./column-types.ts";
import type { Db } from "./connection.ts";

/**
 * What the admin API's read models need to mask secrets (issue 25): the runbook versions that
 * say what is secret, and the members whose data holds the secret values. Reads only.
 */

/** Every version of the runbook a batch runs (a batch may run several: newer phases supersede). */
export async function listRunbookVersionsOfBatch(
  db: Db,
  batchId: number,
): Promise<{ id: number; yamlContent: string }[]> {
  return db
    .selectFrom("batches")
    .innerJoin("runbooks as ofBatch", "ofBatch.id", "batches.runbookId")
    .innerJoin("runbooks", "runbooks.name", "ofBatch.name")
    .select(["runbooks.id", "runbooks.yamlContent"])
    .where("batches.id", "=", batchId)
    .orderBy("runbooks.version")
    .execute();
}

export interface MemberSecretSource {
  readonly id: number;
  readonly batchId: number;
  readonly dataJson: JsonObject;
  readonly workerDataJson: JsonObject;
}

/** The data of the given members (any batch), for the secret values a read must hide. */
export async function listMemberSecretSources(
  db: Db,
  memberIds: readonly number[],
): Promise<MemberSecretSource[]> {
  if (memberIds.length === 0) return [];
  return db
    .selectFrom("batchMembers")
    .select(["id", "batchId", "dataJson", "workerDataJson"])
    .where("id", "in", [...new Set(memberIds)])
    .execute();
}

export interface EventMembers {
  readonly members: readonly MemberSecretSource[];
  /** Step execution id → its member's id. */
  readonly memberOfStep: ReadonlyMap<number, number>;
}

/**
 * The members events are about (a page of a timeline or of the audit trail): those named by
 * member events and the members of the steps named by step events, each member once, in one
 * statement.
 */
export async function listEventMembers(
  db: Db,
  refs: { readonly memberIds: readonly number[]; readonly stepIds: readonly number[] },
): Promise<EventMembers> {
  if (refs.memberIds.length === 0 && refs.stepIds.length === 0)
    return { members: [], memberOfStep: new Map() };
  const result = await sql<Record<string, unknown>>`
    WITH steps AS (
      SELECT id, batch_member_id FROM step_executions WHERE id = ANY(${[...new Set(refs.stepIds)]}::int[])
    )
    SELECT m.id, m.batch_id, m.data_json, m.worker_data_json,
      ARRAY(SELECT s.id FROM steps s WHERE s.batch_member_id = m.id) AS step_ids
    FROM batch_members m
    WHERE m.id = ANY(${[...new Set(refs.memberIds)]}::int[]) OR m.id IN (SELECT batch_member_id FROM steps)
  `.execute(db);
  const rows = camelCaseRows<MemberSecretSource & { stepIds: number[] }>(result.rows);
  return {
    members: rows.map(({ stepIds: _steps, ...member }) => member),
    memberOfStep: new Map(rows.flatMap((row) => row.stepIds.map((stepId) => [stepId, row.id] as const))),
  };
}

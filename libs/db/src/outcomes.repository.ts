import { sql } from "kysely";
import type { Db } from "./connection.ts";
import type { EventEntity } from "./events.table.ts";

/**
 * The batch's members at its end (issue 12 outcomes): `active` ones went through every phase,
 * `failed` ones were isolated by a step failure (removed members count as neither).
 */
export async function countBatchMemberEnds(
  db: Db,
  batchId: number,
): Promise<{ active: number; failed: number }> {
  const row = await sql<{ active: number; failed: number }>`
    SELECT count(*) FILTER (WHERE status = 'active')::int AS active,
           count(*) FILTER (WHERE status = 'failed')::int AS failed
    FROM batch_members WHERE batch_id = ${batchId}
  `.execute(db);
  return row.rows[0] ?? { active: 0, failed: 0 };
}

/**
 * The id of the newest `events` row of an entity: called right after a transition in the same
 * transaction, it is that transition's event (the row stays locked until commit, so no other
 * transition of it can come between). Read backwards on events (batch_id, id): the row is among
 * the batch's newest.
 */
export async function lastEventIdOf(
  db: Db,
  batchId: number,
  entity: EventEntity,
  entityId: number,
): Promise<number> {
  const row = await sql<{ id: number }>`
    SELECT id FROM events
    WHERE batch_id = ${batchId} AND entity = ${entity} AND entity_id = ${entityId}
    ORDER BY id DESC LIMIT 1
  `.execute(db);
  const id = row.rows[0]?.id;
  if (id === undefined) throw new Error(`no event for ${entity} ${entityId}`);
  return Number(id);
}

/** What a notification says about its batch: id, runbook name and the version the batch runs. */
export async function getBatchRef(
  db: Db,
  batchId: number,
): Promise<
  | {
      id: number;
      runbookName: string;
      runbookVersion: number;
      externalRef: string | null;
      createdBy: string | null;
    }
  | undefined
> {
  return db
    .selectFrom("batches")
    .innerJoin("runbooks", "runbooks.id", "batches.runbookId")
    .select([
      "batches.id",
      "runbooks.name as runbookName",
      "runbooks.version as runbookVersion",
      "batches.externalRef",
      "batches.createdBy",
    ])
    .where("batches.id", "=", batchId)
    .executeTakeFirst();
}

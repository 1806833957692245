import { externalRefFromRows } from "@matoolkit/domain";
import { sql } from "kysely";
import type { Db } from "./connection.ts";

/**
 * How many distinct values of the column are read to find a valid one: a batch's members carry
 * one ticket or a few, so this only bounds a pathological source (every row a different bad value).
 */
const CANDIDATES = 100;

/**
 * A batch's externalRef from its members' `column` (runbook `data_source.external_ref_column`,
 * issue 31), in the caller's transaction once its members are inserted: the first member (by id,
 * the order rows were staged or uploaded) with a non-empty valid value (domain
 * externalRefFromRows). A reference already set (given at manual create) is kept. Returns the
 * reference found in the members (null: none), whether or not it was the one kept.
 */
export async function setExternalRefFromMembers(
  db: Db,
  batchId: number,
  column: string,
): Promise<string | null> {
  const candidates = await sql<{ value: string }>`
    SELECT value FROM (
      SELECT data_json ->> ${column} AS value, min(id) AS first_id
      FROM batch_members WHERE batch_id = ${batchId} GROUP BY 1
    ) AS distinct_values
    WHERE btrim(value) <> ''
    ORDER BY first_id
    LIMIT ${CANDIDATES}
  `.execute(db);
  const found = externalRefFromRows(
    candidates.rows.map((row) => ({ [column]: row.value })),
    column,
  );
  if (found === null) return null;
  // Set only where none was given, with an annotation on the batch's timeline (from = to status).
  await sql`
    WITH stamped AS (
      UPDATE batches SET external_ref = ${found}
      WHERE id = ${batchId} AND external_ref IS NULL
      RETURNING id, status
    )
    INSERT INTO events (batch_id, entity, entity_id, from_status, to_status, reason)
    SELECT id, 'batch', id, status, status, ${`external ref ${found} (from ${column})`} FROM stamped
  `.execute(db);
  return found;
}

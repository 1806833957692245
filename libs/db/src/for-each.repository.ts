import { sql } from "kysely";
import type { Db } from "./connection.ts";
import type { StepExecution } from "./steps.table.ts";

/** One for_each step of one member to expand: its row (still item 0 without a value) and the values. */
export interface StepExpansion {
  readonly id: number;
  /** At least one value: a step with none is skipped instead (the caller's skipSteps). */
  readonly items: readonly unknown[];
}

/**
 * Expands for_each steps (issue 30) in ONE statement: each row takes its first value, and a copy of
 * it is inserted for every other value (item_index 1..n-1, status pending, nothing of a run copied).
 * Exactly once: a row is claimed only while `item_value IS NULL AND status = 'pending'`, so a second
 * delivery expanding the same step (it waits on the row lock, then sees the value) claims nothing,
 * and the unique key (phase, member, step index, item index) refuses a duplicate copy anyway.
 * Returns every row of the steps this call expanded, by member, step index and item index; a step
 * another delivery expanded (or cancelled) first is not among them.
 */
export async function expandSteps(db: Db, expansions: readonly StepExpansion[]): Promise<StepExecution[]> {
  if (expansions.length === 0) return [];
  const input = JSON.stringify(
    [...expansions]
      .sort((a, b) => a.id - b.id)
      .map((expansion) => ({ id: expansion.id, items: expansion.items })),
  );
  const claimed = await sql<{ id: number }>`
    WITH input AS (
      SELECT id, items FROM jsonb_to_recordset(${input}::jsonb) AS r(id bigint, items jsonb)
    ),
    claimed AS (
      UPDATE step_executions s
         SET item_index = 0, item_value = input.items -> 0, item_count = jsonb_array_length(input.items)
        FROM input
       WHERE s.id = input.id AND s.item_value IS NULL AND s.status = 'pending'
      RETURNING s.*, input.items
    ),
    copies AS (
      INSERT INTO step_executions (batch_id, phase_execution_id, batch_member_id, step_name, step_index,
        worker_id, function_name, params_json, params_resolved, is_poll_step, poll_interval_sec,
        poll_timeout_sec, on_failure, max_retries, retry_interval_sec, timeout_sec,
        item_index, item_value, item_count)
      SELECT c.batch_id, c.phase_execution_id, c.batch_member_id, c.step_name, c.step_index,
        c.worker_id, c.function_name, c.params_json, c.params_resolved, c.is_poll_step,
        c.poll_interval_sec, c.poll_timeout_sec, c.on_failure, c.max_retries, c.retry_interval_sec,
        c.timeout_sec, (e.ordinality - 1)::int, e.value, c.item_count
      FROM claimed c CROSS JOIN LATERAL jsonb_array_elements(c.items) WITH ORDINALITY AS e(value, ordinality)
      WHERE e.ordinality > 1
      ORDER BY c.id, e.ordinality
      ON CONFLICT (phase_execution_id, batch_member_id, step_index, item_index) DO NOTHING
      RETURNING id
    )
    SELECT id FROM claimed`.execute(db);
  const ids = claimed.rows.map((row) => Number(row.id));
  if (ids.length === 0) return [];
  // A second statement sees the first's rows (a CTE's writes are invisible to its own statement).
  return db
    .selectFrom("stepExecutions")
    .selectAll()
    .where(
      sql<boolean>`(phase_execution_id, batch_member_id, step_index) IN (
        SELECT phase_execution_id, batch_member_id, step_index FROM step_executions
        WHERE id = ANY(${ids}::bigint[]))`,
    )
    .orderBy("batchMemberId")
    .orderBy("stepIndex")
    .orderBy("itemIndex")
    .execute();
}

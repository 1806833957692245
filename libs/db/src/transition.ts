import { sql, type RawBuilder } from "kysely";
import { camelCaseRows } from "./camel-case.ts";
import type { Db } from "./connection.ts";
import { shortReason } from "./events.repository.ts";
import type { EventEntity } from "./events.table.ts";

/** The tables whose `status` column follows a state machine. */
export type StatusTable =
  "batches" | "batch_members" | "phase_executions" | "step_executions" | "init_executions";

export interface GuardedTransition {
  readonly table: StatusTable;
  /** events.entity of the rows this changes. */
  readonly entity: EventEntity;
  /** Column holding the row's batch id, copied to events.batch_id. */
  readonly batchIdColumn: "id" | "batch_id";
  /** The machine's source states for the event: the guard. */
  readonly from: readonly string[];
  readonly to: string;
  /**
   * Other columns to set, by snake_case name: plain values become bind parameters, `sql` fragments
   * are inlined (they may refer to the row being updated as `target`, e.g. `target.retry_count + 1`).
   */
  readonly set?: Readonly<Record<string, unknown>>;
  readonly reason?: string | undefined;
  /** The operator whose request this is (events.actor, the audit trail); omitted for the system's own. */
  readonly actor?: string | undefined;
}

/**
 * Moves every row matching `where` whose status is one of `from` to `to`, and appends one events row
 * per moved row recording its previous status — all in ONE statement, so the change and its audit
 * record commit together. The previous status is read with `FOR NO KEY UPDATE`: a concurrent
 * transition of the same row waits, then re-checks the guard against the committed status and
 * (having lost) changes nothing. Not `FOR UPDATE`: that would also block the foreign-key checks
 * (`FOR KEY SHARE`) of every events/steps insert referencing the row, so a batch transition would
 * stall — and could deadlock with — every handler writing an event for that batch.
 * Returns the moved rows; an empty list means the guard did not hold.
 *
 * `where` is a condition on the table's own columns, e.g. sql`id = ${id}`.
 */
export async function applyTransition<Row>(
  db: Db,
  transition: GuardedTransition,
  where: RawBuilder<unknown>,
): Promise<Row[]> {
  const table = sql.table(transition.table);
  const fromStates = sql.join(transition.from.map((state) => sql`${state}::text`));
  const assignments = Object.entries(transition.set ?? {})
    .filter(([column, value]) => column !== "status" && value !== undefined)
    .map(([column, value]) => sql`${sql.id(column)} = ${value}`);
  const setList = sql.join([sql`status = ${transition.to}::text`, ...assignments]);

  const result = await sql<Record<string, unknown>>`
    WITH previous AS (
      SELECT id, status FROM ${table}
      WHERE (${where}) AND status IN (${fromStates})
      ORDER BY id
      FOR NO KEY UPDATE
    ), updated AS (
      UPDATE ${table} AS target SET ${setList}
      FROM previous
      WHERE target.id = previous.id AND target.status IN (${fromStates})
      RETURNING target.*, previous.status AS previous_status
    ), logged AS (${logEvents(transition)})
    SELECT * FROM updated ORDER BY id
  `.execute(db);

  return camelCaseRows<Row & { previousStatus: string }>(result.rows).map(
    ({ previousStatus: _previous, ...row }) => row as Row,
  );
}

/** Per-row values of a batched transition: `id`, optionally the job the row must still have, and columns. */
export interface TransitionInputRow {
  readonly id: number;
  /** Only if the row's current job_id is this one (see ExecutionTransitionOptions.expectedJobId). */
  readonly expectedJobId?: string;
  /** Column values of this row, by snake_case name; each must be declared in `columns`. */
  readonly values?: Readonly<Record<string, unknown>>;
}

/**
 * `applyTransition` for many rows with different values in ONE statement (a batch of worker
 * results, a batch of dispatches): the rows travel as one jsonb parameter, are typed by
 * `jsonb_to_recordset`, joined to the table by id, and guarded exactly as `applyTransition` guards
 * (status in `from`, and the expected job id where one is given). Rows whose guard fails are left
 * alone and not returned; an id given twice moves once, with the values of its first input row
 * whose guard holds. The rows are locked before the job guard is tested, so it is tested on the
 * committed job id of a row a concurrent transaction had just moved.
 *
 * `columns`: the per-row columns and their SQL types, e.g. `{ result_json: "jsonb" }`.
 */
export async function applyTransitionEach<Row>(
  db: Db,
  transition: GuardedTransition,
  rows: readonly TransitionInputRow[],
  columns: Readonly<Record<string, string>> = {},
): Promise<Row[]> {
  if (rows.length === 0) return [];
  const table = sql.table(transition.table);
  const fromStates = sql.join(transition.from.map((state) => sql`${state}::text`));
  const perRow = Object.entries(columns);
  // `pos`: which of an id's input rows moves it (the first whose guard holds), see `chosen` below.
  const input = JSON.stringify(
    rows.map((row, pos) => ({ id: row.id, pos, expected_job_id: row.expectedJobId ?? null, ...row.values })),
  );
  const recordType = sql.join([
    sql`id bigint`,
    sql`pos int`,
    sql`expected_job_id text`,
    ...perRow.map(([column, type]) => sql`${sql.id(column)} ${sql.raw(type)}`),
  ]);
  const constant = Object.entries(transition.set ?? {})
    .filter(([column, value]) => column !== "status" && value !== undefined && !(column in columns))
    .map(([column, value]) => sql`${sql.id(column)} = ${value}`);
  const fromInput = perRow.map(([column]) => sql`${sql.id(column)} = input.${sql.id(column)}`);
  const setList = sql.join([sql`status = ${transition.to}::text`, ...constant, ...fromInput]);

  const result = await sql<Record<string, unknown>>`
    WITH input AS (
      SELECT * FROM jsonb_to_recordset(${input}::jsonb) AS input(${recordType})
    ), previous AS (
      SELECT t.id, t.status, t.job_id FROM ${table} AS t
      -- The ids as an array: PostgreSQL then reads the rows by primary key. Joined to the
      -- function's rows alone (estimated at 100), it hashed them and read the whole table for
      -- every batch: 4 ms at 10,000 steps on bench:orchestrator, growing with the table.
      WHERE t.id = ANY (ARRAY(SELECT id FROM input))
        AND t.status IN (${fromStates})
      ORDER BY t.id
      FOR NO KEY UPDATE OF t
    ), chosen AS (
      -- An id given twice (two results of one step taken together: a stale job's and the current
      -- one's) moves once, by its first input row whose guard holds on the locked row, not by
      -- whichever row came first: a stale result must not hide the current one.
      SELECT DISTINCT ON (previous.id) previous.id, previous.status, input.pos
      FROM previous JOIN input ON input.id = previous.id
      WHERE input.expected_job_id IS NULL OR previous.job_id = input.expected_job_id
      ORDER BY previous.id, input.pos
    ), updated AS (
      UPDATE ${table} AS target SET ${setList}
      FROM chosen JOIN input ON input.pos = chosen.pos
      WHERE target.id = chosen.id AND target.status IN (${fromStates})
      RETURNING target.*, chosen.status AS previous_status
    ), logged AS (${logEvents(transition)})
    SELECT * FROM updated ORDER BY id
  `.execute(db);

  return camelCaseRows<Row & { previousStatus: string }>(result.rows).map(
    ({ previousStatus: _previous, ...row }) => row as Row,
  );
}

/**
 * The events rows of the rows an `updated` CTE moved (it returns `previous_status`). One statement
 * may move many rows (cancel a member's steps); their events take ids in entity order so the
 * timeline reads the same every time.
 */
function logEvents(transition: GuardedTransition): RawBuilder<unknown> {
  const reason = transition.reason === undefined ? null : shortReason(transition.reason);
  return sql`
      INSERT INTO events (batch_id, entity, entity_id, from_status, to_status, reason, actor)
      SELECT ${sql.ref(transition.batchIdColumn)}, ${transition.entity}::text, id, previous_status, status,
        ${reason}::text, ${transition.actor ?? null}::text
      FROM updated
      ORDER BY id`;
}

import { executionMachine, type ExecutionEvent } from "@matoolkit/domain";
import { sql, type RawBuilder, type Updateable } from "kysely";
import { camelCaseRows, camelToSnake, toColumnNames } from "./camel-case.ts";
import type { Db } from "./connection.ts";
import type { ExecutionColumns } from "./execution-columns.ts";
import { jsonb } from "./json.ts";
import { applyTransition, applyTransitionEach } from "./transition.ts";

/** Columns a transition may set besides status (defaults per event below; these override them). */
export type ExecutionSet = Pick<
  Updateable<ExecutionColumns>,
  | "jobId"
  | "dispatchedAt"
  | "functionName"
  | "paramsJson"
  | "paramsResolved"
  | "resultJson"
  | "errorMessage"
  | "errorCode"
  | "completedAt"
  | "pollStartedAt"
  | "lastPolledAt"
  | "pollCount"
  | "retryCount"
  | "retryAfter"
>;

export interface ExecutionTransitionOptions {
  readonly reason?: string;
  /** The operator whose request this is (events.actor); omitted for the system's own changes. */
  readonly actor?: string;
  readonly set?: ExecutionSet;
  /**
   * Only if the row's current job is this one: a worker result moves only the attempt it answers,
   * never a later one (a retry or a poll dispatched while the result was in flight).
   */
  readonly expectedJobId?: string;
}

export interface ExecutionTransitionRow {
  readonly id: number;
  readonly expectedJobId?: string;
  readonly set?: ExecutionSet;
}

/** SQL types of the execution columns a batched transition may set per row. */
const executionColumnTypes: Readonly<Record<keyof ExecutionSet, string>> = {
  jobId: "text",
  dispatchedAt: "timestamptz",
  functionName: "text",
  paramsJson: "jsonb",
  paramsResolved: "boolean",
  resultJson: "jsonb",
  errorMessage: "text",
  errorCode: "text",
  completedAt: "timestamptz",
  pollStartedAt: "timestamptz",
  lastPolledAt: "timestamptz",
  pollCount: "integer",
  retryCount: "integer",
  retryAfter: "timestamptz",
};

export interface PollDispatch {
  readonly jobId: string;
  readonly lastPolledAt: Date;
}

/**
 * The operations step_executions and init_executions share; both follow executionMachine and have
 * the same execution columns, so one implementation serves both tables.
 */
export interface ExecutionRepository<Row> {
  get(db: Db, id: number): Promise<Row | undefined>;
  /**
   * Reads and locks the row until the caller's transaction ends, for decisions on columns no
   * status guard covers (poll bookkeeping): a concurrent caller waits, then sees what was committed.
   */
  getForUpdate(db: Db, id: number): Promise<Row | undefined>;
  transition(
    db: Db,
    id: number,
    event: ExecutionEvent,
    options?: ExecutionTransitionOptions,
  ): Promise<Row | undefined>;
  /** Applies `event` to every row matching `where` that is in a source state; returns those rows. */
  transitionWhere(
    db: Db,
    where: RawBuilder<unknown>,
    event: ExecutionEvent,
    options?: ExecutionTransitionOptions,
  ): Promise<Row[]>;
  /**
   * Applies `event` to many rows in ONE statement, each with its own column values (and expected
   * job id); every row must set the same columns. Returns the rows that moved, by id.
   */
  transitionEach(
    db: Db,
    event: ExecutionEvent,
    rows: readonly ExecutionTransitionRow[],
    options?: { readonly reason?: string },
  ): Promise<Row[]>;
  /** A poll re-dispatch: new job id, one more poll; only while still polling (not a status change). */
  recordPollDispatch(db: Db, id: number, dispatch: PollDispatch): Promise<Row | undefined>;
  /** Polling rows whose next poll is due: last_polled_at + poll_interval_sec <= now. */
  listPollingDue(db: Db, now: Date): Promise<Row[]>;
  /** Dispatched rows past dispatched_at + coalesce(timeout_sec, default), oldest first. */
  listDispatchedPastTimeout(
    db: Db,
    now: Date,
    options: { readonly defaultTimeoutSec: number; readonly limit: number },
  ): Promise<Row[]>;
  /**
   * Dispatched rows waiting longer than `waitingSec` and still within their timeout, oldest
   * first: the ones whose job may have been lost on the way (stalled-jobs.ts sends them again).
   */
  listDispatchedWaiting(
    db: Db,
    now: Date,
    options: { readonly waitingSec: number; readonly defaultTimeoutSec: number; readonly limit: number },
  ): Promise<Row[]>;
}

export function createExecutionRepository<Row>(config: {
  readonly table: "step_executions" | "init_executions";
  readonly entity: "step" | "init";
}): ExecutionRepository<Row> {
  const table = sql.table(config.table);

  const transitionWhere: ExecutionRepository<Row>["transitionWhere"] = async (
    db,
    where,
    event,
    options = {},
  ) => {
    const { from, to } = executionMachine.transitions[event];
    const { resultJson, paramsJson, ...plainSet } = options.set ?? {};
    const set = {
      ...defaultColumns(event),
      ...toColumnNames(plainSet),
      ...(resultJson === undefined ? {} : { result_json: jsonb(resultJson) }),
      ...(paramsJson === undefined ? {} : { params_json: jsonb(paramsJson) }),
    };
    return applyTransition<Row>(
      db,
      {
        table: config.table,
        entity: config.entity,
        batchIdColumn: "batch_id",
        from,
        to,
        set,
        reason: options.reason,
        actor: options.actor,
      },
      where,
    );
  };

  const transitionEach: ExecutionRepository<Row>["transitionEach"] = async (
    db,
    event,
    rows,
    options = {},
  ) => {
    if (rows.length === 0) return [];
    const { from, to } = executionMachine.transitions[event];
    const keys = Object.keys(rows[0]?.set ?? {}).sort() as (keyof ExecutionSet)[];
    const columns: Record<string, string> = {};
    for (const key of keys) columns[camelToSnake(key)] = executionColumnTypes[key];
    const input = rows.map((row) => {
      const rowKeys = Object.keys(row.set ?? {}).sort();
      // A column missing from one row would be set to NULL on it: refuse rather than guess.
      if (rowKeys.join() !== keys.join())
        throw new Error("transitionEach: every row must set the same columns");
      const values = Object.fromEntries(keys.map((key) => [camelToSnake(key), row.set?.[key] ?? null]));
      return {
        id: row.id,
        ...(row.expectedJobId === undefined ? {} : { expectedJobId: row.expectedJobId }),
        values,
      };
    });
    return applyTransitionEach<Row>(
      db,
      {
        table: config.table,
        entity: config.entity,
        batchIdColumn: "batch_id",
        from,
        to,
        set: defaultColumns(event),
        reason: options.reason,
      },
      input,
      columns,
    );
  };

  return {
    transitionEach,
    async get(db, id) {
      const result = await sql<Record<string, unknown>>`SELECT * FROM ${table} WHERE id = ${id}`.execute(db);
      return camelCaseRows<Row>(result.rows)[0];
    },
    async getForUpdate(db, id) {
      const result = await sql<
        Record<string, unknown>
      >`SELECT * FROM ${table} WHERE id = ${id} FOR UPDATE`.execute(db);
      return camelCaseRows<Row>(result.rows)[0];
    },
    transitionWhere,
    async transition(db, id, event, options) {
      const where =
        options?.expectedJobId === undefined
          ? sql`id = ${id}`
          : sql`id = ${id} AND job_id = ${options.expectedJobId}`;
      const [row] = await transitionWhere(db, where, event, options);
      return row;
    },
    async recordPollDispatch(db, id, dispatch) {
      const result = await sql<Record<string, unknown>>`
        UPDATE ${table}
        SET job_id = ${dispatch.jobId}, last_polled_at = ${dispatch.lastPolledAt}, poll_count = poll_count + 1
        WHERE id = ${id} AND status = 'polling'
        RETURNING *
      `.execute(db);
      return camelCaseRows<Row>(result.rows)[0];
    },
    async listPollingDue(db, now) {
      const result = await sql<Record<string, unknown>>`
        SELECT * FROM ${table}
        WHERE is_open AND status = 'polling'
          AND last_polled_at + make_interval(secs => poll_interval_sec) <= ${now}
        ORDER BY id
      `.execute(db);
      return camelCaseRows<Row>(result.rows);
    },
    async listDispatchedPastTimeout(db, now, options) {
      // Open rows only (the `…_open_idx` partial index, migration 0022): the work in flight, not
      // the table's history, so this stays a short scan however many steps a batch ran. Status
      // and times are tested on those rows; no index holds them, so a dispatch stays HOT.
      const result = await sql<Record<string, unknown>>`
        SELECT * FROM ${table}
        WHERE is_open AND status = 'dispatched'
          AND dispatched_at + make_interval(secs => coalesce(timeout_sec, ${options.defaultTimeoutSec}::int)) < ${now}
        ORDER BY dispatched_at
        LIMIT ${options.limit}
      `.execute(db);
      return camelCaseRows<Row>(result.rows);
    },
    async listDispatchedWaiting(db, now, options) {
      // The same open rows as above.
      const result = await sql<Record<string, unknown>>`
        SELECT * FROM ${table}
        WHERE is_open AND status = 'dispatched'
          AND dispatched_at <= ${now}::timestamptz - make_interval(secs => ${options.waitingSec}::int)
          AND dispatched_at + make_interval(secs => coalesce(timeout_sec, ${options.defaultTimeoutSec}::int)) >= ${now}
        ORDER BY dispatched_at
        LIMIT ${options.limit}
      `.execute(db);
      return camelCaseRows<Row>(result.rows);
    },
  };
}

/** What each event records besides the status; `target` is the row being updated. */
function defaultColumns(event: ExecutionEvent): Record<string, unknown> {
  switch (event) {
    case "dispatch":
      return { dispatched_at: sql`now()` };
    case "start_polling":
      return { poll_started_at: sql`now()`, last_polled_at: sql`now()` };
    case "succeed":
      // A step that succeeded on a retry answers with no error: "ErrorMessage: error details on
      // failure" (000, StepExecutions). The failed attempt's code stays in its `fail` event.
      return { completed_at: sql`now()`, error_code: null, error_message: null };
    case "fail":
    case "fail_to_dispatch":
    case "time_out_polling":
    case "cancel":
    case "skip":
      return { completed_at: sql`now()` };
    case "retry":
      // 000 "Retry Protocol": SetRetryPendingAsync increments retry_count, clears job_id and completed_at.
      return { retry_count: sql`target.retry_count + 1`, job_id: null, completed_at: null };
    case "redrive":
      // Issue 12: a fresh run of the step with a new job id family (`-redrive-{n}`): its retries
      // and polls count again from zero, and the last run's outcome is cleared.
      return {
        redrive_count: sql`target.redrive_count + 1`,
        retry_count: 0,
        poll_count: 0,
        job_id: null,
        completed_at: null,
        dispatched_at: null,
        retry_after: null,
        poll_started_at: null,
        last_polled_at: null,
        error_code: null,
        error_message: null,
        result_json: null,
      };
    default: {
      const unreachable: never = event;
      throw new Error(`unknown execution event ${String(unreachable)}`);
    }
  }
}

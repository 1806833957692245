import { sql } from "kysely";
import type { Db } from "./connection.ts";
import { camelCaseRows } from "./camel-case.ts";
import { createExecutionRepository, type PollDispatch } from "./execution-repository.ts";
import type { StepExecution } from "./steps.table.ts";

/**
 * 000 "Polling Protocol" for many steps at once: a batch of `{complete: false}` results and a
 * batch of poll checks each take one statement per operation, whatever their number (issue 29:
 * a poll cycle — its check, its job, its result — was about nine statements one by one, paid
 * every interval of every polling step for as long as a mailbox move runs).
 */
const steps = createExecutionRepository<StepExecution>({ table: "step_executions", entity: "step" });

export interface PollStart {
  readonly id: number;
  /** The attempt the `{complete: false}` answers: only while it is still the step's job. */
  readonly jobId: string;
  readonly at: Date;
}

/** dispatched → polling for each step whose job is still the one that answered. */
export function startPollingSteps(db: Db, starts: readonly PollStart[]): Promise<StepExecution[]> {
  return steps.transitionEach(
    db,
    "start_polling",
    starts.map((start) => ({
      id: start.id,
      expectedJobId: start.jobId,
      set: { pollStartedAt: start.at, lastPolledAt: start.at },
    })),
  );
}

/**
 * Those of the steps still `polling`, locked FOR UPDATE in id order until the commit: the poll
 * checks' interval guard reads last_polled_at, which no status guard protects, so two checks of
 * one attempt at once must see each other's poll (handlePollCheck). Id order: two transactions
 * locking the same steps cannot deadlock; polling ones only, so a check never holds a step that
 * a result transaction is about to dispatch.
 */
export async function lockPollingSteps(db: Db, ids: readonly number[]): Promise<StepExecution[]> {
  if (ids.length === 0) return [];
  const result = await sql<Record<string, unknown>>`
    SELECT * FROM step_executions WHERE id = ANY (${[...new Set(ids)]}::bigint[]) AND status = 'polling'
    ORDER BY id FOR UPDATE`.execute(db);
  return camelCaseRows<StepExecution>(result.rows);
}

/** A poll re-dispatch of each step still polling: its new job id, one more poll (no status change). */
export async function recordPollDispatches(
  db: Db,
  dispatches: readonly (PollDispatch & { readonly id: number })[],
): Promise<StepExecution[]> {
  if (dispatches.length === 0) return [];
  const result = await sql<Record<string, unknown>>`
    UPDATE step_executions AS s
    SET job_id = d.job_id, last_polled_at = d.last_polled_at, poll_count = s.poll_count + 1
    FROM unnest(${dispatches.map((d) => d.id)}::bigint[], ${dispatches.map((d) => d.jobId)}::text[],
                ${dispatches.map((d) => d.lastPolledAt)}::timestamptz[]) AS d(id, job_id, last_polled_at)
    WHERE s.id = d.id AND s.status = 'polling'
    RETURNING s.*`.execute(db);
  return camelCaseRows<StepExecution>(result.rows).sort((a, b) => a.id - b.id);
}

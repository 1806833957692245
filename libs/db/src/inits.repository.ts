import { chunksForInsert } from "./chunks.ts";
import type { ExecutionEvent } from "@matoolkit/domain";
import { sql } from "kysely";
import type { Db } from "./connection.ts";
import {
  createExecutionRepository,
  type ExecutionTransitionOptions,
  type PollDispatch,
} from "./execution-repository.ts";
import type { InitExecution, NewInitExecution } from "./inits.table.ts";
import { jsonb } from "./json.ts";

const inits = createExecutionRepository<InitExecution>({
  table: "init_executions",
  entity: "init",
});

/**
 * Creates pending init steps; one that already exists for (batch, runbook version, step index) is
 * skipped. Returns how many rows were actually inserted.
 */
export async function insertInits(db: Db, rows: readonly NewInitExecution[]): Promise<number> {
  let inserted = 0;
  const values = rows.map((row) => ({
    ...row,
    paramsJson: jsonb(row.paramsJson ?? {}),
    resultJson: row.resultJson === undefined ? undefined : jsonb(row.resultJson),
  }));
  for (const chunk of chunksForInsert(values)) {
    const result = await db
      .insertInto("initExecutions")
      .values(chunk)
      .onConflict((conflict) => conflict.columns(["batchId", "runbookVersion", "stepIndex"]).doNothing())
      .executeTakeFirst();
    inserted += Number(result.numInsertedOrUpdatedRows ?? 0n);
  }
  return inserted;
}

export function getInit(db: Db, id: number): Promise<InitExecution | undefined> {
  return inits.get(db, id);
}

/** Like getInit, and locks the row until the transaction ends (see ExecutionRepository.getForUpdate). */
export function getInitForUpdate(db: Db, id: number): Promise<InitExecution | undefined> {
  return inits.getForUpdate(db, id);
}

/** Ordered by runbook version, then step index; only `runbookVersion`'s steps when given. */
export async function listInitsByBatch(
  db: Db,
  batchId: number,
  runbookVersion?: number,
): Promise<InitExecution[]> {
  let query = db.selectFrom("initExecutions").selectAll().where("batchId", "=", batchId);
  if (runbookVersion !== undefined) query = query.where("runbookVersion", "=", runbookVersion);
  return query.orderBy("runbookVersion").orderBy("stepIndex").execute();
}

/** Applies `event` if the init step is in one of its source states; undefined when another writer won. */
export function transitionInit(
  db: Db,
  id: number,
  event: ExecutionEvent,
  options?: ExecutionTransitionOptions,
): Promise<InitExecution | undefined> {
  return inits.transition(db, id, event, options);
}

/** Batch cancel: the batch's open init steps (every runbook version) → cancelled, one statement. */
export async function cancelOpenInitsOfBatch(db: Db, batchId: number, reason: string): Promise<number[]> {
  const cancelled = await inits.transitionWhere(db, sql`batch_id = ${batchId}`, "cancel", { reason });
  return cancelled.map((init) => init.id);
}

/** Init steps `dispatched` longer than their timeout (see listStuckSteps). */
export function listStuckInits(
  db: Db,
  now: Date,
  options: { readonly defaultTimeoutSec: number; readonly limit: number },
): Promise<InitExecution[]> {
  return inits.listDispatchedPastTimeout(db, now, options);
}

/** Init steps `dispatched` for at least `waitingSec`, within their timeout (see listWaitingSteps). */
export function listWaitingInits(
  db: Db,
  now: Date,
  options: { readonly waitingSec: number; readonly defaultTimeoutSec: number; readonly limit: number },
): Promise<InitExecution[]> {
  return inits.listDispatchedWaiting(db, now, options);
}

export function recordInitPollDispatch(
  db: Db,
  id: number,
  dispatch: PollDispatch,
): Promise<InitExecution | undefined> {
  return inits.recordPollDispatch(db, id, dispatch);
}

export function listPollingInitsDue(db: Db, now: Date): Promise<InitExecution[]> {
  return inits.listPollingDue(db, now);
}

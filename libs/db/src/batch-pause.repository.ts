import type { BatchStatus } from "@matoolkit/domain";
import { sql } from "kysely";
import type { Db } from "./connection.ts";
import type { InitExecution } from "./inits.table.ts";
import type { PhaseExecution } from "./phases.table.ts";
import type { StepExecution } from "./steps.table.ts";

/**
 * Reads for pausing and resuming a batch (issue 12): the locks that make "no dispatch while
 * paused" race-free, and what a resume has to send again.
 */

/** The batch columns a dispatcher needs, with its runbook's name. */
export interface LockedBatch {
  readonly id: number;
  readonly status: BatchStatus;
  readonly runbookName: string;
  readonly batchStartTime: Date | null;
}

/**
 * The batches, locked FOR SHARE until the transaction ends, in id order (one statement). A
 * transaction that may send a worker job takes this BEFORE it locks any execution row, the order
 * a batch cancel takes them: a pause (FOR NO KEY UPDATE on the batch row) either waits for it or
 * commits first, and then this reads `paused`. Shared, so the handlers of one batch run side by
 * side; it does not block the foreign-key checks (FOR KEY SHARE) of inserts either.
 */
export async function lockBatchesForShare(db: Db, batchIds: readonly number[]): Promise<LockedBatch[]> {
  if (batchIds.length === 0) return [];
  return db
    .selectFrom("batches")
    .innerJoin("runbooks", "runbooks.id", "batches.runbookId")
    .select(["batches.id", "batches.status", "batches.batchStartTime", "runbooks.name as runbookName"])
    .where("batches.id", "in", [...new Set(batchIds)])
    .orderBy("batches.id")
    .forShare("batches")
    .execute();
}

/**
 * The batches of these step and init executions, locked as lockBatchesForShare does, in ONE
 * statement: a group of worker results locks its batches before it locks any of its executions.
 */
export async function lockBatchesOfExecutionsForShare(
  db: Db,
  executions: { readonly stepIds: readonly number[]; readonly initIds: readonly number[] },
): Promise<LockedBatch[]> {
  if (executions.stepIds.length === 0 && executions.initIds.length === 0) return [];
  const result = await sql<{
    id: number;
    status: BatchStatus;
    batch_start_time: Date | null;
    runbook_name: string;
  }>`
    SELECT b.id, b.status, b.batch_start_time, r.name AS runbook_name
    FROM batches b JOIN runbooks r ON r.id = b.runbook_id
    WHERE b.id IN (
      SELECT batch_id FROM step_executions WHERE id = ANY(${[...executions.stepIds]}::bigint[])
      UNION
      SELECT batch_id FROM init_executions WHERE id = ANY(${[...executions.initIds]}::bigint[])
    )
    ORDER BY b.id
    FOR SHARE OF b`.execute(db);
  return result.rows.map((row) => ({
    id: Number(row.id),
    status: row.status,
    runbookName: row.runbook_name,
    batchStartTime: row.batch_start_time,
  }));
}

/** Batches locked FOR SHARE with the phases read beside them (lockBatchesWithPhasesOfStepsForShare). */
export interface LockedBatchesWithPhases {
  readonly batches: LockedBatch[];
  readonly phases: PhaseExecution[];
}

/**
 * The batches of these member steps, locked as lockBatchesForShare does (id order), and the steps'
 * phases, in ONE statement: the result transaction read the phases in a round trip of its own
 * after its first statement (issue 29; each of its ~10 round trips cost ~3.7 ms, it runs one at a
 * time). The phases are read, not locked, as getPhasesByIds reads them: a change to a phase that
 * stops its dispatches (a cancel) locks its batch first, so it waits for the lock taken here.
 */
export async function lockBatchesWithPhasesOfStepsForShare(
  db: Db,
  stepIds: readonly number[],
): Promise<LockedBatchesWithPhases> {
  if (stepIds.length === 0) return { batches: [], phases: [] };
  const rows = await db
    .selectFrom("phaseExecutions")
    .innerJoin("batches", "batches.id", "phaseExecutions.batchId")
    .innerJoin("runbooks", "runbooks.id", "batches.runbookId")
    .selectAll("phaseExecutions")
    .select(["batches.status as batchStatus", "batches.batchStartTime", "runbooks.name as runbookName"])
    .where("phaseExecutions.id", "in", (eb) =>
      eb
        .selectFrom("stepExecutions")
        .select("stepExecutions.phaseExecutionId")
        .where("stepExecutions.id", "in", [...new Set(stepIds)]),
    )
    .orderBy("batches.id")
    .orderBy("phaseExecutions.id")
    .forShare("batches")
    .execute();
  const batches = new Map<number, LockedBatch>();
  const phases: PhaseExecution[] = [];
  for (const { batchStatus, batchStartTime, runbookName, ...phase } of rows) {
    phases.push(phase);
    if (!batches.has(phase.batchId))
      batches.set(phase.batchId, { id: phase.batchId, status: batchStatus, runbookName, batchStartTime });
  }
  return { batches: [...batches.values()], phases };
}

/** How many times the batch has been resumed (paused → active events): part of resume message ids. */
export async function countBatchResumes(db: Db, batchId: number): Promise<number> {
  const row = await db
    .selectFrom("events")
    .select((eb) => eb.fn.countAll<number>().as("count"))
    .where("batchId", "=", batchId)
    .where("entity", "=", "batch")
    .where("entityId", "=", batchId)
    .where("fromStatus", "=", "paused")
    .where("toStatus", "=", "active")
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/**
 * The phases a resume sends phase-due for: every dispatched phase (its members' next steps, and
 * the steps a chunked start had not created yet), and every completed phase with a pending step
 * (a member's catch-up steps created while paused, or a retry that fell due meanwhile).
 */
export async function listPhasesToRestart(db: Db, batchId: number): Promise<PhaseExecution[]> {
  return db
    .selectFrom("phaseExecutions as p")
    .selectAll("p")
    .where("p.batchId", "=", batchId)
    .where((eb) =>
      eb.or([
        eb("p.status", "=", "dispatched"),
        eb.and([
          eb("p.status", "=", "completed"),
          eb.exists(
            eb
              .selectFrom("stepExecutions as s")
              .select("s.id")
              .whereRef("s.phaseExecutionId", "=", "p.id")
              .where("s.isOpen", "=", true)
              .where("s.status", "=", "pending"),
          ),
        ]),
      ]),
    )
    .orderBy("p.sequence")
    .orderBy("p.id")
    .execute();
}

/** Steps of the batch waiting in `polling`: a resume sends each its next poll-check. */
export async function listPollingStepsOfBatch(db: Db, batchId: number): Promise<StepExecution[]> {
  return db
    .selectFrom("stepExecutions")
    .selectAll()
    .where("batchId", "=", batchId)
    .where("isOpen", "=", true)
    .where("status", "=", "polling")
    .orderBy("id")
    .execute();
}

/** Init steps of the batch waiting in `polling`. */
export async function listPollingInitsOfBatch(db: Db, batchId: number): Promise<InitExecution[]> {
  return db
    .selectFrom("initExecutions")
    .selectAll()
    .where("batchId", "=", batchId)
    .where("isOpen", "=", true)
    .where("status", "=", "polling")
    .orderBy("id")
    .execute();
}

/**
 * Pending steps of the batch held back by a retry that is not due yet (retry_after > at): a resume
 * sends their retry-check again for retry_after, so the pause never makes a retry run early.
 */
export async function listRetryWaitingSteps(db: Db, batchId: number, at: Date): Promise<StepExecution[]> {
  return db
    .selectFrom("stepExecutions")
    .selectAll()
    .where("batchId", "=", batchId)
    .where("isOpen", "=", true)
    .where("status", "=", "pending")
    .where("retryAfter", ">", at)
    .orderBy("id")
    .execute();
}

import { sql } from "kysely";
import type { Db } from "./connection.ts";
import { appendEvent } from "./events.repository.ts";

/**
 * Rollback dispatches (000 "Rollback Protocol") recorded on the events timeline, so operators see
 * them beside the failure that caused them: one annotation event per rollback step, on the failed
 * step or init execution (from_status = to_status = its failed/poll_timeout status). This module
 * owns the reason format both ways: it writes it and parses it back for the steps API.
 */
export type RollbackEntity = "step" | "init";

export interface RollbackStepRecord {
  readonly batchId: number;
  readonly entity: RollbackEntity;
  /** The failed execution the rollback is for. */
  readonly executionId: number;
  /** Its status, failed or poll_timeout: the event is an annotation of it in that status. */
  readonly executionStatus: string;
  /** Name of the rollback sequence (the step's on_failure). */
  readonly sequence: string;
  /** 0-based position in the sequence, and the sequence's length. */
  readonly index: number;
  readonly total: number;
  readonly stepName: string;
  /** The worker job sent, or the reason code it was not sent for (e.g. template.unresolved). */
  readonly outcome:
    { readonly sent: true; readonly jobId: string } | { readonly sent: false; readonly reason: string };
}

/** One rollback step as an operator reads it. */
export interface RollbackStepView {
  /** 1-based position in the sequence. */
  readonly position: number;
  readonly stepName: string;
  readonly jobId: string | null;
  readonly sent: boolean;
  /** Why it was not sent (a reason code); null when sent. */
  readonly reason: string | null;
  readonly at: Date;
}

export interface RollbackView {
  /** The rollback sequence's name. */
  readonly name: string;
  /** When its first job was sent; null when none could be sent. */
  readonly dispatchedAt: Date | null;
  readonly steps: RollbackStepView[];
}

/** Names are the runbook author's; cut so the job id at the end always fits the reason (200). */
const MAX_NAME_LENGTH = 60;
const REASON_PATTERN =
  /^rollback (.+?): step (\d+)\/(\d+) (.+) (?:sent \(job ([^\s()]+)\)|not sent \(([a-z0-9_.]+)\))$/;

export function rollbackReason(
  record: Omit<RollbackStepRecord, "batchId" | "entity" | "executionId" | "executionStatus">,
): string {
  const sequence = record.sequence.slice(0, MAX_NAME_LENGTH);
  const stepName = record.stepName.slice(0, MAX_NAME_LENGTH);
  const head = `rollback ${sequence}: step ${record.index + 1}/${record.total} ${stepName}`;
  const tail = record.outcome.sent
    ? `sent (job ${record.outcome.jobId})`
    : `not sent (${record.outcome.reason})`;
  // At most ~190 characters with the names cut, under MAX_EVENT_REASON_LENGTH.
  return `${head} ${tail}`;
}

/** Appends the annotation event for one rollback step, in the caller's transaction. */
export async function recordRollbackStep(db: Db, record: RollbackStepRecord): Promise<void> {
  await appendEvent(db, {
    batchId: record.batchId,
    entity: record.entity,
    entityId: record.executionId,
    fromStatus: record.executionStatus,
    toStatus: record.executionStatus,
    reason: rollbackReason(record),
  });
}

/**
 * The rollbacks recorded for these executions of a batch, keyed `step:<id>` / `init:<id>`; an
 * execution without one is absent. One query on the partial index of annotation events.
 */
export async function listRollbacks(
  db: Db,
  batchId: number,
  executions: { readonly stepIds: readonly number[]; readonly initIds: readonly number[] },
): Promise<Map<string, RollbackView>> {
  const views = new Map<string, RollbackView>();
  if (executions.stepIds.length === 0 && executions.initIds.length === 0) return views;
  const rows = await db
    .selectFrom("events")
    .select(["entity", "entityId", "reason", "at"])
    .where("batchId", "=", batchId)
    // Written exactly as the partial index's predicate, so the planner can use it.
    .where(sql<boolean>`from_status = to_status`)
    .where("reason", "like", "rollback %")
    .where((eb) =>
      eb.or([
        ...(executions.stepIds.length > 0
          ? [eb.and([eb("entity", "=", "step"), eb("entityId", "in", [...executions.stepIds])])]
          : []),
        ...(executions.initIds.length > 0
          ? [eb.and([eb("entity", "=", "init"), eb("entityId", "in", [...executions.initIds])])]
          : []),
      ]),
    )
    .orderBy("id")
    .execute();
  for (const row of rows) {
    const match = REASON_PATTERN.exec(row.reason ?? "");
    if (match === null) continue;
    const [, name, position, , stepName, jobId, notSentReason] = match;
    const key = `${row.entity}:${row.entityId}`;
    const view = views.get(key) ?? { name: name!, dispatchedAt: null, steps: [] };
    const sent = jobId !== undefined;
    view.steps.push({
      position: Number(position),
      stepName: stepName!,
      jobId: jobId ?? null,
      sent,
      reason: notSentReason ?? null,
      at: row.at,
    });
    views.set(key, sent && view.dispatchedAt === null ? { ...view, dispatchedAt: row.at } : view);
  }
  return views;
}

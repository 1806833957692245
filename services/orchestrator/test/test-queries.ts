import type { Db, EventEntity, InitExecution, StepExecution } from "@matoolkit/db";

/** Reads for scenario assertions: what an operator would see in the tables. */
export type StepView = StepExecution & { readonly memberKey: string; readonly phaseName: string };

/** `seconds` after the step's dispatch: what the periodic reconcile's clock would read then. */
export function secondsAfterDispatch(step: StepView, seconds: number): Date {
  return new Date(step.dispatchedAt!.getTime() + seconds * 1000);
}

/** Steps of a batch by phase order, member, then step index, with the member's key and phase name. */
export async function stepsOf(db: Db, batchId: number): Promise<StepView[]> {
  return db
    .selectFrom("stepExecutions")
    .innerJoin("batchMembers", "batchMembers.id", "stepExecutions.batchMemberId")
    .innerJoin("phaseExecutions", "phaseExecutions.id", "stepExecutions.phaseExecutionId")
    .selectAll("stepExecutions")
    .select(["batchMembers.memberKey", "phaseExecutions.phaseName"])
    .where("stepExecutions.batchId", "=", batchId)
    .orderBy("phaseExecutions.sequence")
    .orderBy("stepExecutions.batchMemberId")
    .orderBy("stepExecutions.stepIndex")
    .orderBy("stepExecutions.itemIndex")
    .execute();
}

export function findStep(
  steps: readonly StepView[],
  memberKey: string,
  stepIndex: number,
  phase?: string,
): StepView | undefined {
  return steps.find(
    (s) =>
      s.memberKey === memberKey &&
      s.stepIndex === stepIndex &&
      (phase === undefined || s.phaseName === phase),
  );
}

export function stepOf(steps: readonly StepView[], memberKey: string, stepIndex: number, phase?: string) {
  const step = findStep(steps, memberKey, stepIndex, phase);
  if (step === undefined) throw new Error(`no step ${stepIndex} for ${memberKey}`);
  return step;
}

export async function initsOf(db: Db, batchId: number): Promise<InitExecution[]> {
  return db
    .selectFrom("initExecutions")
    .selectAll()
    .where("batchId", "=", batchId)
    .orderBy("stepIndex")
    .execute();
}

export async function batchStatus(db: Db, batchId: number): Promise<string> {
  const row = await db
    .selectFrom("batches")
    .select("status")
    .where("id", "=", batchId)
    .executeTakeFirstOrThrow();
  return row.status;
}

export async function phaseStatuses(db: Db, batchId: number): Promise<string[]> {
  const rows = await db
    .selectFrom("phaseExecutions")
    .select("status")
    .where("batchId", "=", batchId)
    .orderBy("sequence")
    .execute();
  return rows.map((row) => row.status);
}

/** Member statuses keyed by member key. */
export async function memberStatuses(db: Db, batchId: number): Promise<Record<string, string>> {
  const rows = await db
    .selectFrom("batchMembers")
    .select(["memberKey", "status"])
    .where("batchId", "=", batchId)
    .execute();
  return Object.fromEntries(rows.map((row) => [row.memberKey, row.status]));
}

/**
 * One entity's status timeline as `from→to` strings, oldest first. Annotation events (from = to,
 * e.g. a rollback sent for a failed step) are not status changes and are left out.
 */
export async function transitionsOf(db: Db, entity: EventEntity, entityId: number): Promise<string[]> {
  const rows = await db
    .selectFrom("events")
    .select(["fromStatus", "toStatus"])
    .where("entity", "=", entity)
    .where("entityId", "=", entityId)
    .orderBy("id")
    .execute();
  return rows
    .filter((row) => row.fromStatus !== row.toStatus)
    .map((row) => `${row.fromStatus ?? "∅"}→${row.toStatus}`);
}

/** Annotation events of an execution (from = to): the rollback steps sent for it, as reasons. */
export async function annotationsOf(db: Db, entity: EventEntity, entityId: number): Promise<string[]> {
  const rows = await db
    .selectFrom("events")
    .select(["fromStatus", "toStatus", "reason"])
    .where("entity", "=", entity)
    .where("entityId", "=", entityId)
    .orderBy("id")
    .execute();
  return rows.filter((row) => row.fromStatus === row.toStatus).map((row) => row.reason ?? "");
}

import {
  getInit,
  getInitForUpdate,
  getStep,
  getStepForUpdate,
  recordInitPollDispatch,
  recordPollDispatch,
  transitionInit,
  transitionStep,
  type Db,
  type InitExecution,
  type StepExecution,
} from "@matoolkit/db";
import type { ExecutionEvent } from "@matoolkit/domain";

/**
 * Step executions (per member, in a phase) and init executions (per batch) share one state
 * machine and one set of columns. This module gives the orchestrator one way to address either,
 * so dispatch, polling and retry are written once.
 */
export type ExecutionKind = "step" | "init";

export interface ExecutionRef {
  readonly kind: ExecutionKind;
  readonly id: number;
}

/** One shape for both tables: the columns only one of them has are null on the other. */
export type ExecutionRow = Omit<StepExecution, "phaseExecutionId" | "batchMemberId"> & {
  readonly phaseExecutionId: number | null;
  readonly batchMemberId: number | null;
  readonly runbookVersion: number | null;
};

export type ExecutionUpdate = NonNullable<Parameters<typeof transitionStep>[3]>["set"];

export function fromStep(row: StepExecution | undefined): ExecutionRow | undefined {
  return row === undefined ? undefined : { ...row, runbookVersion: null };
}

export function fromInit(row: InitExecution | undefined): ExecutionRow | undefined {
  return row === undefined ? undefined : { ...row, phaseExecutionId: null, batchMemberId: null };
}

export function refFromCorrelation(isInitStep: boolean, id: number): ExecutionRef {
  return { kind: isInitStep ? "init" : "step", id };
}

export async function loadExecution(db: Db, ref: ExecutionRef): Promise<ExecutionRow | undefined> {
  return ref.kind === "init" ? fromInit(await getInit(db, ref.id)) : fromStep(await getStep(db, ref.id));
}

/** Loads the execution and locks its row until the transaction ends (poll bookkeeping). */
export async function lockExecution(db: Db, ref: ExecutionRef): Promise<ExecutionRow | undefined> {
  return ref.kind === "init"
    ? fromInit(await getInitForUpdate(db, ref.id))
    : fromStep(await getStepForUpdate(db, ref.id));
}

export async function transitionExecution(
  db: Db,
  ref: ExecutionRef,
  event: ExecutionEvent,
  options: { reason?: string; set?: ExecutionUpdate; expectedJobId?: string },
): Promise<ExecutionRow | undefined> {
  return ref.kind === "init"
    ? fromInit(await transitionInit(db, ref.id, event, options))
    : fromStep(await transitionStep(db, ref.id, event, options));
}

export async function recordExecutionPollDispatch(
  db: Db,
  ref: ExecutionRef,
  values: { jobId: string; lastPolledAt: Date },
): Promise<ExecutionRow | undefined> {
  return ref.kind === "init"
    ? fromInit(await recordInitPollDispatch(db, ref.id, values))
    : fromStep(await recordPollDispatch(db, ref.id, values));
}

/**
 * Worker job ids must be unique per attempt so Service Bus duplicate detection never swallows a
 * retry or a poll (000 "Retry Protocol": `step-{id}-retry-{n}` / `init-{id}-retry-{n}`).
 */
export function jobIdFor(ref: ExecutionRef, retryCount: number, pollCount: number): string {
  let jobId = `${ref.kind}-${ref.id}`;
  if (retryCount > 0) jobId += `-retry-${retryCount}`;
  if (pollCount > 0) jobId += `-poll-${pollCount}`;
  return jobId;
}

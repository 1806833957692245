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
  type ExecutionTransitionOptions,
  type InitExecution,
  type PollDispatch,
  type StepExecution,
} from "@matoolkit/db";
import type { ExecutionAddress, ExecutionEvent, ExecutionKind } from "@matoolkit/domain";

export { jobIdFor } from "@matoolkit/domain";
export type { ExecutionKind };

/**
 * Step executions (per member, in a phase) and init executions (per batch) share one state
 * machine and one set of columns. This module gives the orchestrator one way to address either,
 * so dispatch, polling and retry are written once: one repository per kind, looked up by the
 * reference's kind, each giving rows in the shared shape.
 */
export type ExecutionRef = ExecutionAddress;

/** One shape for both tables: the columns only one of them has are null on the other. */
export type ExecutionRow = Omit<
  StepExecution,
  "phaseExecutionId" | "batchMemberId" | "itemIndex" | "itemValue" | "itemCount"
> & {
  readonly phaseExecutionId: number | null;
  readonly batchMemberId: number | null;
  readonly runbookVersion: number | null;
  /** A for_each step's value (issue 30); absent on inits, null on other steps. */
  readonly itemIndex?: number;
  readonly itemValue?: unknown;
  readonly itemCount?: number | null;
};

export type ExecutionUpdate = NonNullable<ExecutionTransitionOptions["set"]>;

interface KindRepository {
  get(db: Db, id: number): Promise<ExecutionRow | undefined>;
  getForUpdate(db: Db, id: number): Promise<ExecutionRow | undefined>;
  transition(
    db: Db,
    id: number,
    event: ExecutionEvent,
    options: ExecutionTransitionOptions,
  ): Promise<ExecutionRow | undefined>;
  recordPollDispatch(db: Db, id: number, values: PollDispatch): Promise<ExecutionRow | undefined>;
}

export function fromStep(row: StepExecution | undefined): ExecutionRow | undefined {
  return row === undefined ? undefined : { ...row, runbookVersion: null };
}

export function fromInit(row: InitExecution | undefined): ExecutionRow | undefined {
  return row === undefined ? undefined : { ...row, phaseExecutionId: null, batchMemberId: null };
}

const repositories: Readonly<Record<ExecutionKind, KindRepository>> = {
  step: {
    get: async (db, id) => fromStep(await getStep(db, id)),
    getForUpdate: async (db, id) => fromStep(await getStepForUpdate(db, id)),
    transition: async (db, id, event, options) => fromStep(await transitionStep(db, id, event, options)),
    recordPollDispatch: async (db, id, values) => fromStep(await recordPollDispatch(db, id, values)),
  },
  init: {
    get: async (db, id) => fromInit(await getInit(db, id)),
    getForUpdate: async (db, id) => fromInit(await getInitForUpdate(db, id)),
    transition: async (db, id, event, options) => fromInit(await transitionInit(db, id, event, options)),
    recordPollDispatch: async (db, id, values) => fromInit(await recordInitPollDispatch(db, id, values)),
  },
};

export function refFromCorrelation(isInitStep: boolean, id: number): ExecutionRef {
  return { kind: isInitStep ? "init" : "step", id };
}

export function loadExecution(db: Db, ref: ExecutionRef): Promise<ExecutionRow | undefined> {
  return repositories[ref.kind].get(db, ref.id);
}

/** Loads the execution and locks its row until the transaction ends (poll bookkeeping). */
export function lockExecution(db: Db, ref: ExecutionRef): Promise<ExecutionRow | undefined> {
  return repositories[ref.kind].getForUpdate(db, ref.id);
}

export function transitionExecution(
  db: Db,
  ref: ExecutionRef,
  event: ExecutionEvent,
  options: ExecutionTransitionOptions,
): Promise<ExecutionRow | undefined> {
  return repositories[ref.kind].transition(db, ref.id, event, options);
}

export function recordExecutionPollDispatch(
  db: Db,
  ref: ExecutionRef,
  values: PollDispatch,
): Promise<ExecutionRow | undefined> {
  return repositories[ref.kind].recordPollDispatch(db, ref.id, values);
}

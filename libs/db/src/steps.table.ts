import type { Insertable, Selectable, Updateable } from "kysely";
import type { ExecutionColumns } from "./execution-columns.ts";

/** One step of one phase for one member. */
export interface StepExecutionsTable extends ExecutionColumns {
  phaseExecutionId: number;
  batchMemberId: number;
}

export type StepExecution = Selectable<StepExecutionsTable>;
export type NewStepExecution = Insertable<StepExecutionsTable>;
export type StepExecutionUpdate = Updateable<StepExecutionsTable>;

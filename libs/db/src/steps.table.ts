import type { Insertable, Selectable, Updateable } from "kysely";
import type { Generated } from "kysely";
import type { JsonColumn } from "./column-types.ts";
import type { ExecutionColumns } from "./execution-columns.ts";

/** One step of one phase for one member. */
export interface StepExecutionsTable extends ExecutionColumns {
  phaseExecutionId: number;
  batchMemberId: number;
  /** A for_each step's value position (issue 30, migration 0016); 0 on every other step. */
  itemIndex: Generated<number>;
  /** The value `{{item}}` stands for; null until the step is expanded, and on every other step. */
  itemValue: JsonColumn<unknown>;
  /** How many values the for_each step has for the member; null until expanded. */
  itemCount: number | null;
}

export type StepExecution = Selectable<StepExecutionsTable>;
export type NewStepExecution = Insertable<StepExecutionsTable>;
export type StepExecutionUpdate = Updateable<StepExecutionsTable>;

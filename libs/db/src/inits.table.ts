import type { Insertable, Selectable, Updateable } from "kysely";
import type { ExecutionColumns } from "./execution-columns.ts";

/** One init step of a batch (runs once per batch, not per member) for one runbook version. */
export interface InitExecutionsTable extends ExecutionColumns {
  runbookVersion: number;
}

export type InitExecution = Selectable<InitExecutionsTable>;
export type NewInitExecution = Insertable<InitExecutionsTable>;
export type InitExecutionUpdate = Updateable<InitExecutionsTable>;

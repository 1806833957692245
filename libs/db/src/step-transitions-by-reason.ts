import type { Db } from "./connection.ts";
import { createExecutionRepository, type ExecutionTransitionRow } from "./execution-repository.ts";
import type { StepExecution } from "./steps.table.ts";

const steps = createExecutionRepository<StepExecution>({ table: "step_executions", entity: "step" });

/**
 * A guarded transition of many steps whose events carry different reasons (skips by clause,
 * failures by error code, retries by attempt): one transitionEach per distinct reason, in
 * reason order: each statement locks its rows in id
 * order, so two transactions moving the same steps take their locks in one order.
 */
export async function transitionStepsByReason(
  db: Db,
  event: "fail" | "retry" | "skip",
  rows: readonly { reason: string; row: ExecutionTransitionRow }[],
): Promise<StepExecution[]> {
  const byReason = new Map<string, ExecutionTransitionRow[]>();
  for (const { reason, row } of rows) {
    const group = byReason.get(reason);
    if (group === undefined) byReason.set(reason, [row]);
    else group.push(row);
  }
  const moved: StepExecution[] = [];
  for (const reason of [...byReason.keys()].sort()) {
    moved.push(...(await steps.transitionEach(db, event, byReason.get(reason)!, { reason })));
  }
  return moved;
}

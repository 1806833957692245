import { DataSourceError } from "../datasource-error.ts";
import { sleep, type QueryBudget } from "../deadline.ts";
import type { DatabricksTiming } from "./databricks-timing.ts";
import type { StatementApi } from "./statement-api.ts";
import type { StatementResponse } from "./statement-schemas.ts";

export interface AwaitOptions {
  readonly signal: AbortSignal;
  readonly budget?: QueryBudget;
  readonly warehouseStartTimeoutMs: number;
  readonly timing: DatabricksTiming;
}

/**
 * Polls a submitted statement until it leaves PENDING and RUNNING. PENDING means the warehouse
 * is starting (a cold serverless or classic warehouse takes minutes) or the statement is queued:
 * that wait runs on its own budget (`warehouseStartTimeoutMs`) instead of the query's, which
 * starts afresh when the statement leaves PENDING. Only the first PENDING spell gets that
 * budget, so a statement bouncing back to PENDING cannot extend the query for ever.
 */
export async function awaitStatement(
  api: StatementApi,
  submitted: StatementResponse,
  options: AwaitOptions,
): Promise<StatementResponse> {
  const warehouse = warehouseWait(options);
  let response = submitted;
  warehouse.observe(response.status.state);
  const { firstPollDelayMs, maxPollDelayMs } = options.timing;
  for (let delay = firstPollDelayMs; isRunning(response); delay = Math.min(delay * 2, maxPollDelayMs)) {
    await sleep(delay, options.signal);
    response = await api.get(submitted.statement_id);
    warehouse.observe(response.status.state);
  }
  return response;
}

function isRunning(response: StatementResponse): boolean {
  return response.status.state === "PENDING" || response.status.state === "RUNNING";
}

function warehouseWait(options: AwaitOptions): { observe(state: string): void } {
  let phase: "before" | "waiting" | "over" = "before";
  const seconds = Math.round(options.warehouseStartTimeoutMs / 100) / 10;
  return {
    observe(state) {
      if (options.budget === undefined) return;
      if (phase === "before" && state === "PENDING") {
        phase = "waiting";
        options.budget.suspendFor(
          options.warehouseStartTimeoutMs,
          // Retriable: the next tick finds the warehouse started, or tries again.
          () => new DataSourceError("databricks", `warehouse did not start within ${seconds} s`),
        );
      } else if (phase === "waiting" && state !== "PENDING") {
        phase = "over";
        options.budget.restart();
      }
    },
  };
}

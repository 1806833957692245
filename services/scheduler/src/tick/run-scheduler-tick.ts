import { clearRunbookError, listActiveRunbooks, recordRunbookError, type Db } from "@matoolkit/db";
import { sanitizeErrorMessage, toSafeError } from "@matoolkit/domain";
import type { DataSourceClient } from "@matoolkit/datasources";
import type { Logger } from "@matoolkit/runtime";
import { noBatchLifecycle, type BatchLifecycle } from "../batch-lifecycle.ts";
import { processRunbook, type RunbookTickResult } from "./process-runbook.ts";

export interface SchedulerTickDeps {
  readonly db: Db;
  readonly logger: Logger;
  readonly dataSources: DataSourceClient;
  readonly lifecycle?: BatchLifecycle;
}

export type RunbookOutcome =
  | ({ readonly runbookName: string; readonly ok: true } & RunbookTickResult)
  | { readonly runbookName: string; readonly ok: false; readonly error: string };

/**
 * One scheduler tick (000 "Scheduler Internals", Timer Lifecycle step 2) over every active
 * runbook, each in isolation: a failure is stored on that runbook's last_error/last_error_at and
 * the next runbook goes on; a success clears it. The poll sweep (step 3) has its own timer.
 */
export async function runSchedulerTick(deps: SchedulerTickDeps, now: Date): Promise<RunbookOutcome[]> {
  const runbookDeps = { ...deps, lifecycle: deps.lifecycle ?? noBatchLifecycle };
  const outcomes: RunbookOutcome[] = [];
  for (const runbook of await listActiveRunbooks(deps.db)) {
    const logger = deps.logger.child({ runbook: runbook.name, runbookVersion: runbook.version });
    try {
      const result = await processRunbook(runbookDeps, runbook, now);
      await clearRunbookError(deps.db, runbook.id);
      outcomes.push({ runbookName: runbook.name, ok: true, ...result });
      if (result.sourceQueried) logger.info(summaryOf(result), "runbook synchronised");
    } catch (error) {
      const message = describeFailure(error);
      logger.warn({ reason: message }, "runbook tick failed; other runbooks go on");
      await recordRunbookError(deps.db, runbook.id, message, now).catch((recordError: unknown) => {
        logger.error({ err: describeFailure(recordError) }, "could not record the runbook's last_error");
      });
      outcomes.push({ runbookName: runbook.name, ok: false, error: message });
    }
  }
  return outcomes;
}

/** `<reason code>: <sanitized message>`: what operators see in last_error (no values, no secrets). */
export function describeFailure(error: unknown): string {
  const safe = toSafeError(error);
  return sanitizeErrorMessage(`${safe.reason}: ${safe.message}`, 500);
}

function summaryOf(result: RunbookTickResult) {
  return {
    sourceRows: result.sourceRows,
    batchesCreated: result.createdBatchIds.length,
    groupsNotCreated: result.groupsNotCreated,
    membersAdded: result.membersAdded,
    membersRemoved: result.membersRemoved,
    membersRefreshed: result.membersRefreshed,
    batchesTransitioned: result.transitionedBatchIds.length,
    phasesDispatched: result.dispatchedPhaseIds.length,
  };
}

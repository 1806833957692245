import {
  findDeadLetters,
  findFailedBatches,
  findFailingSources,
  findPhasesNotDispatched,
  findStepsPastTimeout,
  findThrottledPools,
  type AlertFinding,
  type Db,
} from "@matoolkit/db";
import { alertThresholds as t, reasonCodes, type AlertConditionId } from "@matoolkit/domain";

/** The orchestrator's default step timeout (services/orchestrator stuck-executions.ts, issue 3). */
const DEFAULT_STEP_TIMEOUT_SECONDS = 3600;

/**
 * The in-process evaluation of each condition that has one (libs/domain alertDefinitions, where
 * `inProcess` is not null): the database queries with the definitions' thresholds.
 * `no-live-worker` has none: workers write nothing the database could show (see its definition).
 */
export const alertFinders: Partial<Record<AlertConditionId, (db: Db, now: Date) => Promise<AlertFinding[]>>> =
  {
    "source-failing": (db) => findFailingSources(db, t.sourceFailingTicks),
    "dead-letters": (db, now) => findDeadLetters(db, secondsBefore(now, t.deadLetterWindowSeconds)),
    "steps-past-timeout": (db, now) =>
      findStepsPastTimeout(db, now, {
        graceSeconds: t.stepTimeoutGraceSeconds,
        defaultTimeoutSec: DEFAULT_STEP_TIMEOUT_SECONDS,
      }),
    "throttled-share": (db, now) =>
      findThrottledPools(db, now, {
        windowSeconds: t.throttledWindowSeconds,
        share: t.throttledShare,
        minResults: t.throttledMinResults,
        throttledCodes: [reasonCodes.graphThrottled, reasonCodes.workerThrottled],
      }),
    "phase-not-dispatched": (db, now) => findPhasesNotDispatched(db, now, t.phaseDueGraceSeconds),
    "batch-failed": (db, now) => findFailedBatches(db, secondsBefore(now, t.batchFailedWindowSeconds)),
  };

function secondsBefore(now: Date, seconds: number): Date {
  return new Date(now.getTime() - seconds * 1000);
}

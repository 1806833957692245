import type { Db } from "./connection.ts";
import type { StepExecution } from "./steps.table.ts";
import { transitionStepsByReason } from "./step-transitions-by-reason.ts";

/**
 * A batch of failed worker results, set-based like the successes (step-progression.repository.ts):
 * the failure and the retry each take one statement per distinct reason, the same guarded
 * transitions as the one-row functions (issue 29: a failed result went one by one, five
 * statements). The events row of a transition carries its reason, so rows are grouped by it;
 * a batch holds a handful of reasons (error codes, "retry n of m") whatever its size.
 */
export interface StepFailure {
  readonly id: number;
  /** The attempt the result answers: a result for an earlier attempt moves nothing. */
  readonly jobId: string;
  /** The stable reason code: stored on the step and as its event's reason. */
  readonly code: string;
  /** Already sanitized (domain's sanitizeErrorMessage). */
  readonly message: string;
  readonly result: unknown;
  readonly completedAt: Date;
}

/** dispatched/polling → failed for each failure whose job is still the step's current one. */
export function failSteps(db: Db, failures: readonly StepFailure[]): Promise<StepExecution[]> {
  return transitionStepsByReason(
    db,
    "fail",
    failures.map((failure) => ({
      reason: failure.code,
      row: {
        id: failure.id,
        expectedJobId: failure.jobId,
        set: {
          errorCode: failure.code,
          errorMessage: failure.message,
          resultJson: failure.result ?? null,
          completedAt: failure.completedAt,
        },
      },
    })),
  );
}

export interface StepRetry {
  readonly id: number;
  /** The attempt about to start: the step's retry count after this retry. */
  readonly retryCount: number;
  readonly maxRetries: number;
  /** When the retry check falls due (000 "Retry Protocol"). */
  readonly retryAfter: Date;
}

/** failed → pending for another attempt, its job cleared until the retry check dispatches it. */
export function retrySteps(db: Db, retries: readonly StepRetry[]): Promise<StepExecution[]> {
  return transitionStepsByReason(
    db,
    "retry",
    retries.map((retry) => ({
      reason: `retry ${retry.retryCount} of ${retry.maxRetries}`,
      row: {
        id: retry.id,
        set: { retryCount: retry.retryCount, jobId: null, completedAt: null, retryAfter: retry.retryAfter },
      },
    })),
  );
}

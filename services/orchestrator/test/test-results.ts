import type { WorkerResultMessage } from "@matoolkit/domain";

/**
 * A worker's result for a member step, as a test scripts it: a success answering the step's
 * current job unless `overrides` say otherwise (another JobId for a stale attempt, a Failure with
 * its Error, `{complete: false}`).
 */
export function stepResult(
  step: { readonly id: number; readonly jobId?: string | null },
  batch: { readonly runbookName: string; readonly runbookVersion: number },
  overrides: Partial<WorkerResultMessage> = {},
): WorkerResultMessage {
  return {
    JobId: step.jobId ?? `step-${step.id}`,
    Status: "Success",
    Result: { complete: true, data: {} },
    Error: null,
    CorrelationData: {
      StepExecutionId: step.id,
      IsInitStep: false,
      RunbookName: batch.runbookName,
      RunbookVersion: batch.runbookVersion,
    },
    ...overrides,
  };
}

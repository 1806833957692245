import { MatoolkitError, NonRetriableError, reasonCodes } from "@matoolkit/domain";
import type { WorkerError, WorkerJobMessage, WorkerResultMessage } from "@matoolkit/domain";
import type { FunctionRegistry } from "./functions/function-registry.ts";
import { defaultThrottleRetryPolicy, invokeWithThrottleRetry } from "./throttle-retry.ts";
import type { AttemptOutcome, ThrottleRetryPolicy } from "./throttle-retry.ts";
import { unconfiguredTenantClients, type TenantClients } from "./tenant/tenant-clients.ts";
import { toWireResult, type WireResult } from "./wire-result.ts";
import { workerErrorFrom } from "./worker-error.ts";

export interface ExecuteJobOptions {
  /** The function is aborted and the job reported as `worker.timeout` after this long. */
  readonly timeoutMs: number;
  readonly now?: () => Date;
  readonly throttleRetry?: ThrottleRetryPolicy;
  /** The target tenant's clients; without them tenant functions fail with `tenant.not_configured`. */
  readonly tenant?: TenantClients;
  /**
   * Aborts the function from outside (its claim was taken over: job-lease.ts); the job is then
   * reported with the signal's reason when that is a MatoolkitError.
   */
  readonly signal?: AbortSignal;
}

/**
 * Runs one job's function and describes the outcome as a result message in 000's exact format.
 * Never throws: whatever the function does (throws, hangs, returns something JSON cannot carry)
 * becomes a Failure result, so the orchestrator always hears back.
 */
export async function executeJob(
  job: WorkerJobMessage,
  registry: FunctionRegistry,
  options: ExecuteJobOptions,
): Promise<WorkerResultMessage> {
  const now = options.now ?? (() => new Date());
  const startedAt = now();
  const outcome = await runFunction(job, registry, options);
  const finishedAt = now();
  const fields = describe(outcome);
  return {
    JobId: job.JobId,
    Status: fields.Error === null ? "Success" : "Failure",
    ResultType: fields.ResultType,
    Result: fields.Result,
    Error: fields.Error,
    DurationMs: Math.max(0, finishedAt.getTime() - startedAt.getTime()),
    Timestamp: finishedAt.toISOString(),
    CorrelationData: job.CorrelationData,
  };
}

async function runFunction(
  job: WorkerJobMessage,
  registry: FunctionRegistry,
  options: ExecuteJobOptions,
): Promise<AttemptOutcome<unknown>> {
  const fn = registry.resolve(job.FunctionName);
  if (fn === undefined) {
    const available = registry.names().join(", ") || "none";
    const message = `Unknown function "${job.FunctionName}". Available: ${available}`;
    return {
      ok: false,
      error: new NonRetriableError(reasonCodes.workerUnknownFunction, message),
      attempts: 0,
    };
  }

  const controller = new AbortController();
  const seconds = Math.round(options.timeoutMs / 100) / 10;
  // Built when the timer fires, not per job: an Error captures a stack trace (~1 % of the worker's
  // CPU in bench:orchestrator's profile when every job built one).
  const timeoutError = (): MatoolkitError =>
    new MatoolkitError(reasonCodes.workerTimeout, `Function exceeded the job timeout of ${seconds}s`);
  let attempts = 0;
  // A function that ignores its signal cannot be stopped, but its job is reported on time anyway.
  const stopped = new Promise<AttemptOutcome<unknown>>((resolve) => {
    controller.signal.addEventListener(
      "abort",
      () => {
        const reason: unknown = controller.signal.reason;
        resolve({ ok: false, error: reason instanceof MatoolkitError ? reason : timeoutError(), attempts });
      },
      { once: true },
    );
  });
  const timer = setTimeout(() => controller.abort(timeoutError()), options.timeoutMs);
  const external = options.signal;
  const abortFromOutside = (): void => controller.abort(external?.reason);
  if (external?.aborted === true) abortFromOutside();
  external?.addEventListener("abort", abortFromOutside, { once: true });
  try {
    const invoke = async (attempt: number): Promise<unknown> => {
      attempts = attempt;
      return fn(job.Parameters, {
        jobId: job.JobId,
        stepExecutionId: job.CorrelationData.StepExecutionId,
        isInitStep: job.CorrelationData.IsInitStep,
        batchId: job.BatchId,
        attempt,
        signal: controller.signal,
        tenant: options.tenant ?? noTenant,
      });
    };
    const policy = options.throttleRetry ?? defaultThrottleRetryPolicy;
    return await Promise.race([invokeWithThrottleRetry(invoke, policy, controller.signal), stopped]);
  } finally {
    clearTimeout(timer);
    external?.removeEventListener("abort", abortFromOutside);
  }
}

const noTenant = unconfiguredTenantClients("set MATOOLKIT_TENANT (see docs/worker-and-tenant.md)");

function describe(outcome: AttemptOutcome<unknown>): WireResult & { readonly Error: WorkerError | null } {
  if (outcome.ok) {
    try {
      return { ...toWireResult(outcome.value), Error: null };
    } catch {
      const error = new MatoolkitError(reasonCodes.workerError, "Function returned a value that is not JSON");
      return { Result: null, ResultType: "Null", Error: workerErrorFrom(error, outcome.attempts) };
    }
  }
  return { Result: null, ResultType: "Null", Error: workerErrorFrom(outcome.error, outcome.attempts) };
}

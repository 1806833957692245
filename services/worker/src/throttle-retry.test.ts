import { describe, expect, it } from "vitest";
import {
  MatoolkitError,
  NonRetriableError,
  reasonCodes,
  RetryAfterError,
  type WorkerJobMessage,
} from "@matoolkit/domain";
import { executeJob, type ExecuteJobOptions } from "./execute-job.ts";
import { createFunctionRegistry } from "./functions/function-registry.ts";
import {
  invokeWithThrottleRetry,
  isThrottlingError,
  isTransientError,
  type ThrottleRetryPolicy,
} from "./throttle-retry.ts";

const policy: ThrottleRetryPolicy = { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 2 };
const live = new AbortController().signal;

function job(FunctionName: string): WorkerJobMessage {
  return {
    JobId: "step-9-retry-0",
    BatchId: 1,
    WorkerId: "worker-01",
    FunctionName,
    Parameters: {},
    CorrelationData: { StepExecutionId: 9, IsInitStep: false, RunbookName: "r", RunbookVersion: 1 },
  };
}
const fast: ExecuteJobOptions = { timeoutMs: 5_000, throttleRetry: policy };

describe("transient errors", () => {
  it.each([
    [new MatoolkitError(reasonCodes.graphThrottled, "429"), true, true],
    [new RetryAfterError(reasonCodes.exchangeThrottled, "429", 0), true, true],
    [new MatoolkitError(reasonCodes.graphUnavailable, "503"), true, false],
    [new MatoolkitError(reasonCodes.exchangeUnavailable, "ECONNRESET"), true, false],
    [new NonRetriableError(reasonCodes.graphUnavailable, "gone for good"), false, false],
    [new MatoolkitError(reasonCodes.graphNotFound, "404"), false, false],
    [new MatoolkitError(reasonCodes.tenantAuthFailed, "no token"), false, false],
    [new Error("graph.unavailable"), false, false],
  ])("%s: retried in-process %s, throttling %s", (error, transient, throttling) => {
    expect(isTransientError(error)).toBe(transient);
    expect(isThrottlingError(error)).toBe(throttling);
  });

  it("retries an unavailable service with the same back-off, and stops at the first success", async () => {
    const delays: number[] = [];
    let last = Date.now();
    const outcome = await invokeWithThrottleRetry(
      async (attempt) => {
        delays.push(Date.now() - last);
        last = Date.now();
        if (attempt < 3) throw new MatoolkitError(reasonCodes.graphUnavailable, "HTTP 503");
        return "ok";
      },
      { maxAttempts: 5, baseDelayMs: 20, maxDelayMs: 40 },
      live,
      () => 0,
    );
    expect(outcome).toEqual({ ok: true, value: "ok", attempts: 3 });
    // Equal jitter with random() = 0: half the exponential ceiling (10 ms, then 20 ms).
    expect(delays[1]).toBeGreaterThanOrEqual(9);
    expect(delays[2]).toBeGreaterThanOrEqual(19);
  });

  it("does not retry a permanent error", async () => {
    let calls = 0;
    const outcome = await invokeWithThrottleRetry(
      async () => {
        calls++;
        throw new MatoolkitError(reasonCodes.graphForbidden, "403");
      },
      policy,
      live,
    );
    expect(outcome).toMatchObject({ ok: false, attempts: 1 });
    expect(calls).toBe(1);
  });
});

describe("executeJob with transient failures", () => {
  it("gets past an outage without reporting anything", async () => {
    const registry = createFunctionRegistry({
      "Get-Flaky": async (_params, context) => {
        if (context.attempt < 3) throw new MatoolkitError(reasonCodes.exchangeUnavailable, "HTTP 502");
        return { complete: true };
      },
    });
    const result = await executeJob(job("Get-Flaky"), registry, fast);
    expect(result).toMatchObject({ Status: "Success", Error: null, Result: { complete: true } });
  });

  it("reports an outage that outlasts the retries with its reason, IsThrottled false and every attempt", async () => {
    let calls = 0;
    const registry = createFunctionRegistry({
      "Get-Down": async () => {
        calls++;
        throw new MatoolkitError(reasonCodes.graphUnavailable, "Graph answered HTTP 503");
      },
    });
    const result = await executeJob(job("Get-Down"), registry, fast);
    expect(result.Error).toStrictEqual({
      Message: "Graph answered HTTP 503",
      Type: reasonCodes.graphUnavailable,
      IsThrottled: false,
      Attempts: 4,
    });
    expect(calls).toBe(4);
  });

  it("still reports exhausted throttling as IsThrottled", async () => {
    const registry = createFunctionRegistry({
      "Get-Busy": async () => {
        throw new RetryAfterError(reasonCodes.graphThrottled, "Too many requests", 0);
      },
    });
    const result = await executeJob(job("Get-Busy"), registry, fast);
    expect(result.Error).toMatchObject({ Type: reasonCodes.graphThrottled, IsThrottled: true, Attempts: 4 });
  });
});

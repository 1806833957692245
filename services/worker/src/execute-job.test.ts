import { describe, expect, it } from "vitest";
import {
  MatoolkitError,
  reasonCodes,
  workerResultMessageSchema,
  type WorkerJobMessage,
} from "@matoolkit/domain";
import { executeJob, type ExecuteJobOptions } from "./execute-job.ts";
import { createDiagnosticFunctions } from "./functions/diagnostics.ts";
import { createFunctionRegistry } from "./functions/function-registry.ts";
import type { FunctionModule } from "./functions/worker-function.ts";

const correlation = {
  StepExecutionId: 123,
  IsInitStep: false,
  RunbookName: "contoso-mailbox-migration",
  RunbookVersion: 1,
};

function job(
  FunctionName: string,
  Parameters: Record<string, unknown> = {},
  overrides: Partial<WorkerJobMessage> = {},
) {
  return {
    JobId: "step-123-attempt-1",
    BatchId: 42,
    WorkerId: "worker-01",
    FunctionName,
    Parameters,
    CorrelationData: correlation,
    ...overrides,
  };
}

/** A clock that answers the start, then the end of the job. */
function clock(...isoTimes: string[]): () => Date {
  let i = 0;
  return () => new Date(isoTimes[Math.min(i++, isoTimes.length - 1)]!);
}

const fast: ExecuteJobOptions = {
  timeoutMs: 5_000,
  throttleRetry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 },
};

describe("executeJob result message (000 message 8)", () => {
  it("reports a success with every field of the wire format, in order, and echoes CorrelationData", async () => {
    const registry = createFunctionRegistry(createDiagnosticFunctions());
    const params = { DisplayName: "John Doe", Count: 2 };
    const result = await executeJob(job("Test-Echo", params), registry, {
      ...fast,
      now: clock("2025-03-15T10:30:00.000Z", "2025-03-15T10:30:01.234Z"),
    });

    expect(result).toStrictEqual({
      JobId: "step-123-attempt-1",
      Status: "Success",
      ResultType: "Object",
      Result: { complete: true, data: params },
      Error: null,
      DurationMs: 1234,
      Timestamp: "2025-03-15T10:30:01.234Z",
      CorrelationData: correlation,
    });
    expect(Object.keys(result)).toEqual([
      "JobId",
      "Status",
      "ResultType",
      "Result",
      "Error",
      "DurationMs",
      "Timestamp",
      "CorrelationData",
    ]);
    expect(workerResultMessageSchema.safeParse(JSON.parse(JSON.stringify(result))).success).toBe(true);
  });

  it("reports a plain failure with a Null result and the 000 Error object", async () => {
    const registry = createFunctionRegistry(createDiagnosticFunctions());
    const result = await executeJob(job("Test-Fail", { Message: "User not found" }), registry, fast);

    expect(result).toMatchObject({
      Status: "Failure",
      ResultType: "Null",
      Result: null,
      CorrelationData: correlation,
    });
    expect(result.Error).toStrictEqual({
      Message: "User not found",
      Type: reasonCodes.workerError,
      IsThrottled: false,
      Attempts: 1,
    });
  });

  it("retries a throttled function inside the worker, then reports IsThrottled with the attempts made", async () => {
    const registry = createFunctionRegistry(createDiagnosticFunctions());
    const result = await executeJob(
      job("Test-Fail", { Message: "Too many requests", Throttled: "true" }),
      registry,
      fast,
    );

    expect(result.Status).toBe("Failure");
    expect(result.Error).toStrictEqual({
      Message: "Too many requests",
      Type: reasonCodes.workerThrottled,
      IsThrottled: true,
      Attempts: 3,
    });
  });

  it("does not report throttling that a retry got past", async () => {
    let calls = 0;
    const module: FunctionModule = {
      "Get-Busy": async (_params, context) => {
        calls++;
        if (context.attempt === 1) throw new MatoolkitError(reasonCodes.graphThrottled, "429");
        return true;
      },
    };
    const result = await executeJob(job("Get-Busy"), createFunctionRegistry(module), fast);

    expect(result).toMatchObject({ Status: "Success", ResultType: "Boolean", Result: true, Error: null });
    expect(calls).toBe(2);
  });

  it("sanitizes member PII out of error messages", async () => {
    const registry = createFunctionRegistry(createDiagnosticFunctions());
    const result = await executeJob(
      job("Test-Fail", { Message: "User jdoe@contoso.com not found" }),
      registry,
      fast,
    );

    expect(result.Error?.Message).toBe("User [email] not found");
    expect(JSON.stringify(result)).not.toContain("jdoe@contoso.com");
  });

  it("reports an unknown function with its reason code and the available names", async () => {
    const registry = createFunctionRegistry(createDiagnosticFunctions());
    const result = await executeJob(job("New-EntraUser"), registry, fast);

    expect(result).toMatchObject({ Status: "Failure", Result: null, CorrelationData: correlation });
    expect(result.Error).toMatchObject({
      Type: reasonCodes.workerUnknownFunction,
      IsThrottled: false,
      Attempts: 0,
    });
    expect(result.Error?.Message).toContain("New-EntraUser");
    expect(result.Error?.Message).toContain("Test-Echo");
  });

  it("aborts a function that exceeds the timeout and reports worker.timeout", async () => {
    const registry = createFunctionRegistry(createDiagnosticFunctions());
    const started = Date.now();
    const result = await executeJob(job("Test-Sleep", { Seconds: 30 }), registry, { ...fast, timeoutMs: 50 });

    expect(result.Status).toBe("Failure");
    expect(result.Error).toMatchObject({ Type: reasonCodes.workerTimeout, IsThrottled: false, Attempts: 1 });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("reports the timeout on time even when the function ignores its abort signal", async () => {
    const module: FunctionModule = { "Wait-Forever": () => new Promise(() => {}) };
    const result = await executeJob(job("Wait-Forever"), createFunctionRegistry(module), {
      ...fast,
      timeoutMs: 30,
    });

    expect(result.Error?.Type).toBe(reasonCodes.workerTimeout);
  });

  it("rejects invalid parameters without echoing their values", async () => {
    const registry = createFunctionRegistry(createDiagnosticFunctions());
    const result = await executeJob(job("Test-Sleep", { Seconds: "jdoe-secret-value" }), registry, fast);

    expect(result.Error).toMatchObject({ Type: reasonCodes.workerInvalidParameters, Attempts: 1 });
    expect(result.Error?.Message).toContain("Seconds");
    expect(result.Error?.Message).not.toContain("jdoe-secret-value");
  });

  it.each([
    ["Object", { a: 1 }, { a: 1 }],
    ["Array", [1, "x"], [1, "x"]],
    ["Boolean", false, false],
    ["String", "done", "done"],
    ["Number", 42, 42],
    ["Null", null, null],
    ["Null", undefined, null],
    ["String", new Date("2025-03-15T10:30:00Z"), "2025-03-15T10:30:00.000Z"],
  ])("types a returned value as %s", async (resultType, value, wire) => {
    const registry = createFunctionRegistry({ "Get-Value": async () => value });
    const result = await executeJob(job("Get-Value"), registry, fast);

    expect(result).toMatchObject({ Status: "Success", ResultType: resultType, Error: null });
    expect(result.Result).toStrictEqual(wire);
  });

  it("fails a job whose result JSON cannot carry", async () => {
    const registry = createFunctionRegistry({ "Get-Big": async () => ({ n: 10n }) });
    const result = await executeJob(job("Get-Big"), registry, fast);

    expect(result).toMatchObject({ Status: "Failure", Result: null, ResultType: "Null" });
    expect(result.Error?.Type).toBe(reasonCodes.workerError);
  });
});

describe("diagnostic functions", () => {
  it("Test-Sleep sleeps for fractions of a second and succeeds", async () => {
    const registry = createFunctionRegistry(createDiagnosticFunctions());
    const result = await executeJob(job("Test-Sleep", { Seconds: "0.01" }), registry, fast);

    expect(result).toMatchObject({
      Status: "Success",
      Result: { complete: true, data: { SleptSeconds: 0.01 } },
    });
  });

  it("Test-Flaky fails the first FailTimes calls of a step, then succeeds, counting each step apart", async () => {
    const registry = createFunctionRegistry(createDiagnosticFunctions());
    const attempt = (step: number, retry: number) =>
      executeJob(
        job(
          "Test-Flaky",
          { FailTimes: 2 },
          {
            JobId: `step-${step}-retry-${retry}`,
            CorrelationData: { ...correlation, StepExecutionId: step },
          },
        ),
        registry,
        fast,
      );

    expect((await attempt(7, 0)).Status).toBe("Failure");
    expect((await attempt(8, 0)).Status).toBe("Failure");
    expect((await attempt(7, 1)).Status).toBe("Failure");
    expect(await attempt(7, 2)).toMatchObject({
      Status: "Success",
      Result: { complete: true, data: { Calls: 3 } },
    });
    expect((await attempt(8, 1)).Status).toBe("Failure");
  });

  it("Test-Flaky shares its counter between steps given the same Key", async () => {
    const registry = createFunctionRegistry(createDiagnosticFunctions());
    const forStep = (step: number) =>
      job(
        "Test-Flaky",
        { FailTimes: 1, Key: "shared" },
        { CorrelationData: { ...correlation, StepExecutionId: step } },
      );

    expect((await executeJob(forStep(1), registry, fast)).Status).toBe("Failure");
    expect((await executeJob(forStep(2), registry, fast)).Status).toBe("Success");
  });

  it("Test-Poll answers not complete PendingTimes times for a step, then complete with data", async () => {
    const registry = createFunctionRegistry(createDiagnosticFunctions());
    const poll = (isInitStep: boolean) =>
      executeJob(
        job(
          "Test-Poll",
          { PendingTimes: 2 },
          { CorrelationData: { ...correlation, IsInitStep: isInitStep } },
        ),
        registry,
        fast,
      );

    expect((await poll(false)).Result).toStrictEqual({ complete: false });
    expect((await poll(false)).Result).toStrictEqual({ complete: false });
    // An init execution with the same id is another execution: its count starts at zero.
    expect((await poll(true)).Result).toStrictEqual({ complete: false });
    expect(await poll(false)).toMatchObject({
      Status: "Success",
      Result: { complete: true, data: { Polls: 3 } },
    });
  });

  it("keeps counters per worker process: a new set of diagnostics starts over", async () => {
    const first = createFunctionRegistry(createDiagnosticFunctions());
    const second = createFunctionRegistry(createDiagnosticFunctions());

    expect((await executeJob(job("Test-Flaky", { FailTimes: 1 }), first, fast)).Status).toBe("Failure");
    expect((await executeJob(job("Test-Flaky", { FailTimes: 1 }), second, fast)).Status).toBe("Failure");
  });
});

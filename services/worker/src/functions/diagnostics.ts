import { z } from "zod";
import { MatoolkitError, reasonCodes } from "@matoolkit/domain";
import { abortableDelay } from "../abortable-delay.ts";
import { parseFunctionParams } from "./parse-function-params.ts";
import { safeToRepeat, type FunctionModule, type WorkerFunctionContext } from "./worker-function.ts";

/**
 * Built-in functions for tests and demos, named like PowerShell cmdlets so runbooks read the same
 * as with the real library. Every success returns the 000 envelope `{ complete: true, data }`
 * (output_params read `Result.data` first), so each one also works as a polling step.
 *
 * Test-Flaky and Test-Poll count calls in this worker process's memory, keyed by the `Key`
 * parameter or by default by the step (orchestrator retries and poll re-dispatches arrive as new
 * jobs for the same step). A restart forgets the counts, which is what a demo wants. Echo, Sleep and
 * Fail are safe to repeat; Flaky and Poll are not (each call counts).
 */
export function createDiagnosticFunctions(): FunctionModule {
  const flakyCalls = new Map<string, number>();
  const pollCalls = new Map<string, number>();

  return {
    /** Returns its parameters unchanged as `data`. */
    "Test-Echo": safeToRepeat(async (params) => ({ complete: true, data: params })),

    /** Waits `Seconds` (fractions allowed), stopping early when the job is aborted. */
    "Test-Sleep": safeToRepeat(async (params, context) => {
      const { Seconds } = parseFunctionParams("Test-Sleep", sleepParams, params);
      await abortableDelay(Seconds * 1000, context.signal);
      return { complete: true, data: { SleptSeconds: Seconds } };
    }),

    /** Always fails with `Message`; `Throttled: true` makes it a throttling failure. */
    "Test-Fail": safeToRepeat(async (params) => {
      const { Message, Throttled } = parseFunctionParams("Test-Fail", failParams, params);
      if (Throttled) throw new MatoolkitError(reasonCodes.workerThrottled, Message);
      throw new Error(Message);
    }),

    /** Fails the first `FailTimes` calls for the same key, then succeeds. */
    "Test-Flaky": async (params, context) => {
      const { FailTimes, Key } = parseFunctionParams("Test-Flaky", flakyParams, params);
      const calls = increment(flakyCalls, Key ?? stepKey(context));
      if (calls <= FailTimes) throw new Error(`Test-Flaky failing call ${calls} of ${FailTimes}`);
      return { complete: true, data: { Calls: calls } };
    },

    /** Answers "not complete yet" `PendingTimes` times for the same key, then completes. */
    "Test-Poll": async (params, context) => {
      const { PendingTimes, Key } = parseFunctionParams("Test-Poll", pollParams, params);
      const calls = increment(pollCalls, Key ?? stepKey(context));
      if (calls <= PendingTimes) return { complete: false };
      return { complete: true, data: { Polls: calls } };
    },
  };
}

// Runbook templates resolve to strings, so numbers and booleans are also accepted as text.
const count = z.coerce.number().int().min(0);
const flag = z.union([
  z.boolean(),
  z.enum(["true", "false", "True", "False"]).transform((v) => v.toLowerCase() === "true"),
]);

const sleepParams = z.object({ Seconds: z.coerce.number().min(0) });
const failParams = z.object({
  Message: z.string().min(1).default("Test-Fail failed as asked"),
  Throttled: flag.default(false),
});
const flakyParams = z.object({ FailTimes: count.default(1), Key: z.string().min(1).optional() });
const pollParams = z.object({ PendingTimes: count.default(1), Key: z.string().min(1).optional() });

/** Init and step executions have separate id sequences, so the kind is part of the key. */
function stepKey(context: WorkerFunctionContext): string {
  return `${context.isInitStep ? "init" : "step"}-${context.stepExecutionId}`;
}

function increment(counts: Map<string, number>, key: string): number {
  const next = (counts.get(key) ?? 0) + 1;
  counts.set(key, next);
  return next;
}

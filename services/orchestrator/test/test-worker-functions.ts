import { createDiagnosticFunctions, type FunctionModule, type WorkerFunction } from "@matoolkit/worker";

// The worker functions of scenario tests: the diagnostic ones plus `Hold`, every call recorded
// so a test can count the jobs a step got and see their parameters.

/** One invocation of a worker function, as the worker ran it. */
export interface WorkerCall {
  readonly functionName: string;
  readonly jobId: string;
  readonly stepExecutionId: number;
  readonly isInitStep: boolean;
  readonly params: Record<string, unknown>;
  readonly at: Date;
}

export interface ScenarioFunctions {
  readonly module: FunctionModule;
  /** Every invocation, in call order. */
  readonly calls: WorkerCall[];
  /** Opens the gate `Hold` steps wait on (params `Gate`). */
  open(gate: string): void;
}

export function createScenarioFunctions(): ScenarioFunctions {
  const calls: WorkerCall[] = [];
  const gates = createGates();
  return {
    module: recorded(calls, { ...createDiagnosticFunctions(), ...gates.module }),
    calls,
    open: gates.open,
  };
}

function recorded(calls: WorkerCall[], module: FunctionModule): FunctionModule {
  const wrap =
    (functionName: string, fn: WorkerFunction): WorkerFunction =>
    (params, context) => {
      calls.push({
        functionName,
        jobId: context.jobId,
        stepExecutionId: context.stepExecutionId,
        isInitStep: context.isInitStep,
        params,
        at: new Date(),
      });
      return fn(params, context);
    };
  return Object.fromEntries(Object.entries(module).map(([name, fn]) => [name, wrap(name, fn)]));
}

/**
 * `Hold {Gate, FailTimes?}`: fails the first `FailTimes` calls of a step (default 0), then answers
 * `{complete: true}` once the gate is open (at once if it already is).
 */
function createGates(): { module: FunctionModule; open(gate: string): void } {
  const opened = new Set<string>();
  const waiting = new Map<string, Array<() => void>>();
  const callsByStep = new Map<string, number>();
  return {
    module: {
      Hold: async (params, context) => {
        const gate = String(params.Gate);
        const step = `${context.isInitStep ? "init" : "step"}-${context.stepExecutionId}`;
        const calls = (callsByStep.get(step) ?? 0) + 1;
        callsByStep.set(step, calls);
        if (calls <= Number(params.FailTimes ?? 0)) throw new Error(`Hold failing call ${calls} as asked`);
        if (!opened.has(gate)) {
          await new Promise<void>((resolve, reject) => {
            waiting.set(gate, [...(waiting.get(gate) ?? []), resolve]);
            context.signal.addEventListener("abort", () => reject(new Error("aborted")), { once: true });
          });
        }
        return { complete: true, data: { Gate: gate } };
      },
    },
    open(gate) {
      opened.add(gate);
      for (const release of waiting.get(gate) ?? []) release();
      waiting.delete(gate);
    },
  };
}

import type { DataSourceType } from "@matoolkit/domain";
import { DataSourceError } from "./datasource-error.ts";

/**
 * The running time budget of a query, as a source may shape it: a Databricks statement waiting
 * for its warehouse to start runs on a budget of its own, and the query's starts afresh once it
 * leaves that wait. Whatever the budget, the same signal ends everything.
 */
export interface QueryBudget {
  /** Replaces the running budget by `ms`; when that runs out the query aborts with `reason()`. */
  suspendFor(ms: number, reason: () => DataSourceError): void;
  /** The query's own budget again, in full, from now. */
  restart(): void;
}

export interface Deadline extends QueryBudget {
  /** Aborted on timeout, an exhausted budget or caller abort; its `reason` is the error to throw. */
  readonly signal: AbortSignal;
  dispose(): void;
}

/**
 * One signal for the whole query (connect, run, every chunk, every row handed to the caller), so
 * a slow source fails its own runbook's tick with a clear error and never holds the scheduler.
 */
export function startDeadline(
  sourceType: DataSourceType,
  timeoutMs: number,
  external?: AbortSignal,
): Deadline {
  const controller = new AbortController();
  const seconds = Math.round(timeoutMs / 100) / 10;
  const timedOut = (): DataSourceError =>
    new DataSourceError(sourceType, `query timed out after ${seconds} s`);
  let timer: NodeJS.Timeout | undefined;
  let disposed = false;
  const arm = (ms: number, reason: () => DataSourceError): void => {
    clearTimeout(timer);
    if (!disposed && !controller.signal.aborted) timer = setTimeout(() => controller.abort(reason()), ms);
  };
  arm(timeoutMs, timedOut);
  const onAbort = (): void => controller.abort(new DataSourceError(sourceType, "query aborted"));
  if (external?.aborted) onAbort();
  else external?.addEventListener("abort", onAbort, { once: true });
  return {
    signal: controller.signal,
    suspendFor: arm,
    restart: () => arm(timeoutMs, timedOut),
    dispose: () => {
      disposed = true;
      clearTimeout(timer);
      external?.removeEventListener("abort", onAbort);
    },
  };
}

/** For drivers that take no signal: settles with the signal's reason as soon as it aborts. */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error as Error);
      },
    );
  });
}

/** Waits, but no longer than the deadline. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return raceAbort(new Promise<void>((resolve) => setTimeout(resolve, ms).unref()), signal);
}

import type { DataSourceType } from "@matoolkit/domain";
import { DataSourceError } from "./datasource-error.ts";

export interface Deadline {
  /** Aborted on timeout or caller abort; its `reason` is the DataSourceError to throw. */
  readonly signal: AbortSignal;
  dispose(): void;
}

/**
 * One signal for the whole query (connect, run, every chunk), so a slow source fails its own
 * runbook's tick with a clear error and never holds the scheduler.
 */
export function startDeadline(
  sourceType: DataSourceType,
  timeoutMs: number,
  external?: AbortSignal,
): Deadline {
  const controller = new AbortController();
  const seconds = Math.round(timeoutMs / 100) / 10;
  const timer = setTimeout(
    () => controller.abort(new DataSourceError(sourceType, `query timed out after ${seconds} s`)),
    timeoutMs,
  );
  const onAbort = (): void => controller.abort(new DataSourceError(sourceType, "query aborted"));
  if (external?.aborted) onAbort();
  else external?.addEventListener("abort", onAbort, { once: true });
  return {
    signal: controller.signal,
    dispose: () => {
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

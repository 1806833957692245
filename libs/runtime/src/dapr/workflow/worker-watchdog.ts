import type { Logger } from "../../logger.ts";

/**
 * The part of @dapr/dapr 3.18's TaskHubGrpcWorker (WorkflowRuntime.worker) the watchdog reads.
 * Its `start()` runs the work-item stream in the background; when the first session ends in an
 * error (daprd killed: "14 UNAVAILABLE: Connection dropped", or stopped: "1 CANCELLED") the SDK
 * rethrows instead of reconnecting (internalRunWorker: `if (isFirstAttempt) throw err`), logs
 * "Worker failed" and sets `_isRunning = false`: from then on no workflow of this process advances,
 * while the app still looks healthy. Seen on daprd 1.18.1 in the Dapr drills.
 */
interface SdkWorker {
  _isRunning?: unknown;
  _stopWorker?: unknown;
  start(): Promise<void>;
}

/**
 * Starts the worker again whenever the SDK gave up on it, every `intervalMs`, until stopped.
 * The worker keeps its registered workflows and activities; a new start opens a new stream.
 */
export function watchWorkflowWorker(options: {
  readonly runtime: unknown;
  readonly logger: Logger;
  readonly intervalMs?: number;
}): { stop(): void } {
  const worker = (options.runtime as { worker?: SdkWorker }).worker;
  if (worker === undefined || typeof worker._isRunning !== "boolean" || typeof worker.start !== "function") {
    options.logger.warn(
      { reason: "workflow.worker_unwatched" },
      "the Dapr workflow SDK's worker has an unknown shape: it will not be restarted if its stream fails",
    );
    return { stop: () => undefined };
  }
  let restarting = false;
  const timer = setInterval(() => {
    if (restarting || worker._isRunning !== false || worker._stopWorker === true) return;
    restarting = true;
    options.logger.warn(
      { reason: "workflow.worker_restarted" },
      "the Dapr workflow worker lost its stream to the sidecar and gave up; starting it again",
    );
    worker
      .start()
      .catch((error: unknown) =>
        options.logger.warn(
          { err: error instanceof Error ? error.message : String(error) },
          "workflow worker restart failed",
        ),
      )
      .finally(() => {
        restarting = false;
      });
  }, options.intervalMs ?? 2_000);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

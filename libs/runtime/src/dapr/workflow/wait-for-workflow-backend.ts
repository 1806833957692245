import { sanitizeErrorMessage } from "@matoolkit/domain";
import type { Logger } from "../../logger.ts";
import { isInstanceNotFound } from "./dapr-workflow-errors.ts";

export interface WaitForWorkflowBackendOptions {
  /** One workflow-state lookup; resolves (whatever the answer) once the sidecar's engine serves. */
  readonly lookup: (instanceId: string) => Promise<unknown>;
  readonly logger: Logger;
  readonly signal: AbortSignal;
  readonly initialDelayMs?: number;
  readonly maxDelayMs?: number;
}

/** An id no workflow uses: the lookup only proves that the sidecar answers workflow calls. */
const PROBE_INSTANCE_ID = "matoolkit-workflow-readiness-probe";

/**
 * Resolves once the sidecar answers a workflow-state lookup, retrying with backoff for as long as
 * it takes (until `signal` aborts). Dapr's workflow worker gives up for good when its very first
 * connection fails (it retries only after one succeeded), so starting it before the sidecar
 * listens would leave every workflow unprocessed while the app looks healthy; on `dapr run` and
 * Kubernetes the app and its sidecar start in any order.
 */
export async function waitForWorkflowBackend(options: WaitForWorkflowBackendOptions): Promise<void> {
  const maxDelayMs = options.maxDelayMs ?? 5_000;
  let delayMs = options.initialDelayMs ?? 100;
  for (let attempt = 1; ; attempt += 1) {
    options.signal.throwIfAborted();
    const problem = await untilAborted(probe(options.lookup), options.signal);
    if (problem === undefined) {
      if (attempt > 1) options.logger.info({ attempts: attempt }, "Dapr workflow engine is reachable");
      return;
    }
    // First miss, then every ~10th: enough to see why workflows do not run, without flooding.
    if (attempt === 1 || attempt % 10 === 0) {
      options.logger.warn({ attempt, problem }, "waiting for the Dapr sidecar's workflow engine");
    }
    await sleep(delayMs, options.signal);
    delayMs = Math.min(maxDelayMs, delayMs * 2);
  }
}

/**
 * The lookup itself may never answer: up to Dapr 1.17 the sidecar holds every workflow call until
 * its actors are up, and it brings them up only once the app's port answers; the SDK sets no
 * deadline. So stop() must not wait for it (the call is dropped with the client's channel).
 */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

async function probe(lookup: (instanceId: string) => Promise<unknown>): Promise<string | undefined> {
  try {
    await lookup(PROBE_INSTANCE_ID);
    return undefined;
  } catch (error) {
    // Older runtimes report an unknown id as an error: the engine answered all the same.
    if (isInstanceNotFound(error)) return undefined;
    return sanitizeErrorMessage(error instanceof Error ? error.message : "unreachable");
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

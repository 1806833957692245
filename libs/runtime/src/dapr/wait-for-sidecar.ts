import type { Logger } from "../logger.ts";
import type { DaprHttp } from "./dapr-http.ts";

export interface WaitForSidecarOptions {
  readonly http: DaprHttp;
  readonly logger: Logger;
  /** Stops waiting (shutdown before the sidecar ever answered). */
  readonly signal?: AbortSignal;
  readonly initialDelayMs?: number;
  readonly maxDelayMs?: number;
}

/**
 * Resolves once the sidecar answers `GET /v1.0/healthz/outbound` (its components are loaded, so
 * publish, state and jobs calls work), retrying with exponential backoff for as long as it takes:
 * on Kubernetes and in `dapr run` the app and its sidecar start in any order, and an app that
 * crashed because its sidecar was two seconds late would only restart into the same race.
 * The outbound probe does not need the app's own port, so there is no deadlock with the sidecar
 * waiting for the app.
 */
export async function waitForSidecar(options: WaitForSidecarOptions): Promise<void> {
  const { http, logger } = options;
  const maxDelayMs = options.maxDelayMs ?? 5_000;
  let delayMs = options.initialDelayMs ?? 100;
  for (let attempt = 1; ; attempt += 1) {
    options.signal?.throwIfAborted();
    const problem = await probe(http);
    if (problem === undefined) {
      if (attempt > 1) logger.info({ attempts: attempt }, "Dapr sidecar is ready");
      return;
    }
    // First miss, then every ~10th: enough to see why a pod is not ready without flooding logs.
    if (attempt === 1 || attempt % 10 === 0) {
      logger.warn(
        { endpoint: http.address.httpEndpoint, attempt, problem },
        "waiting for the Dapr sidecar; not ready until it answers",
      );
    }
    await sleep(delayMs, options.signal);
    delayMs = Math.min(maxDelayMs, delayMs * 2);
  }
}

async function probe(http: DaprHttp): Promise<string | undefined> {
  try {
    await http.request({ method: "GET", path: "/v1.0/healthz/outbound", operation: "healthz.outbound" });
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : "unreachable";
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

import type { Logger } from "../logger.ts";
import type { DaprHttp } from "./dapr-http.ts";
import { pollSidecarHealth } from "./poll-sidecar-health.ts";

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
  const attempts = await pollSidecarHealth({
    http: options.http,
    path: "/v1.0/healthz/outbound",
    logger: options.logger,
    waitingMessage: "waiting for the Dapr sidecar; not ready until it answers",
    signal: options.signal,
    initialDelayMs: options.initialDelayMs ?? 100,
    maxDelayMs: options.maxDelayMs ?? 5_000,
  });
  if (attempts > 1) options.logger.info({ attempts }, "Dapr sidecar is ready");
}

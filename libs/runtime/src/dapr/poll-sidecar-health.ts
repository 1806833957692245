import type { Logger } from "../logger.ts";
import type { DaprHttp } from "./dapr-http.ts";

/** One of daprd's health endpoints: `/v1.0/healthz/outbound` (usable) or `/v1.0/healthz` (initialised). */
export type SidecarHealthPath = "/v1.0/healthz/outbound" | "/v1.0/healthz";

const operations: Record<SidecarHealthPath, string> = {
  "/v1.0/healthz/outbound": "healthz.outbound",
  "/v1.0/healthz": "healthz",
};

/** Why the sidecar's health endpoint did not answer 2xx, or undefined when it did. */
export async function sidecarHealthProblem(
  http: DaprHttp,
  path: SidecarHealthPath,
): Promise<string | undefined> {
  try {
    await http.request({ method: "GET", path, operation: operations[path] });
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : "unreachable";
  }
}

export interface PollSidecarHealthOptions {
  readonly http: DaprHttp;
  readonly path: SidecarHealthPath;
  readonly logger: Logger;
  /** Logged (a warning) on the first miss and every tenth after, with the attempt and the problem. */
  readonly waitingMessage: string;
  readonly signal?: AbortSignal;
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
}

/**
 * Polls a sidecar health endpoint with exponential backoff until it answers; how many attempts it
 * took. The first miss, then every ~10th, is logged: enough to see why a pod is not ready without
 * flooding the log. Rejects only when `signal` aborts.
 */
export async function pollSidecarHealth(options: PollSidecarHealthOptions): Promise<number> {
  let delayMs = options.initialDelayMs;
  for (let attempt = 1; ; attempt += 1) {
    options.signal?.throwIfAborted();
    const problem = await sidecarHealthProblem(options.http, options.path);
    if (problem === undefined) return attempt;
    if (attempt === 1 || attempt % 10 === 0) {
      options.logger.warn(
        { endpoint: options.http.address.httpEndpoint, attempt, problem },
        options.waitingMessage,
      );
    }
    await untilAborted(new Promise((resolve) => setTimeout(resolve, delayMs).unref()), options.signal);
    delayMs = Math.min(options.maxDelayMs, delayMs * 2);
  }
}

/** `work`, or the signal's reason as soon as it aborts. */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return work;
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

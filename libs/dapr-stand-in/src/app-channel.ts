import { connect } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { withDeadline } from "@matoolkit/domain";

/**
 * The sidecar's connection to its app: waiting for the app port to accept connections (daprd
 * blocks on the app port before discovering subscriptions) and sending callbacks with the
 * `dapr-api-token` header when an app API token is configured.
 */

export interface AppResponse {
  readonly status: number;
  readonly body: string;
}

export class AppChannelError extends Error {
  constructor(
    message: string,
    readonly aborted: boolean,
  ) {
    super(message);
    this.name = "AppChannelError";
  }
}

export interface AppChannelOptions {
  readonly appUrl: string;
  readonly appApiToken: string | undefined;
  readonly requestTimeoutMs: number;
  /** Aborted when the sidecar stops. */
  readonly signal: AbortSignal;
}

export class AppChannel {
  private readonly baseUrl: URL;

  constructor(private readonly options: AppChannelOptions) {
    this.baseUrl = new URL(options.appUrl);
  }

  /** Resolves once a TCP connection to the app succeeds; rejects only when the sidecar stops. */
  async waitForAppPort(retryEveryMs: number): Promise<void> {
    const port = Number(this.baseUrl.port || (this.baseUrl.protocol === "https:" ? 443 : 80));
    const host = this.baseUrl.hostname.replace(/^\[|\]$/g, "");
    while (!this.options.signal.aborted) {
      if (await canConnect(host, port)) return;
      await sleep(retryEveryMs, undefined, { signal: this.options.signal }).catch(() => undefined);
    }
    throw new AppChannelError("sidecar stopped before the app port opened", true);
  }

  async request(
    method: "GET" | "POST",
    path: string,
    body?: { readonly contentType: string; readonly payload: string },
    headers: Readonly<Record<string, string>> = {},
  ): Promise<AppResponse> {
    const requestHeaders: Record<string, string> = { ...headers };
    if (body !== undefined) requestHeaders["content-type"] = body.contentType;
    if (this.options.appApiToken !== undefined) requestHeaders["dapr-api-token"] = this.options.appApiToken;
    const url = new URL(path.replace(/^\/+/, ""), ensureTrailingSlash(this.baseUrl));
    try {
      return await withDeadline(this.options.signal, this.options.requestTimeoutMs, async (signal) => {
        const response = await fetch(url, { method, headers: requestHeaders, body: body?.payload, signal });
        return { status: response.status, body: await response.text() };
      });
    } catch (error) {
      const aborted = this.options.signal.aborted;
      const reason = aborted ? "sidecar stopping" : describeFetchError(error);
      throw new AppChannelError(`${method} ${url.pathname} failed: ${reason}`, aborted);
    }
  }
}

function canConnect(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const finish = (connected: boolean): void => {
      socket.destroy();
      resolve(connected);
    };
    socket.once("connect", () => finish(true));
    socket.once("error", () => finish(false));
    socket.setTimeout(1000, () => finish(false));
  });
}

function ensureTrailingSlash(url: URL): URL {
  const copy = new URL(url.href);
  if (!copy.pathname.endsWith("/")) copy.pathname += "/";
  return copy;
}

function describeFetchError(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as Error & { cause?: unknown }).cause;
    if (error.name === "TimeoutError") return "timed out";
    if (cause instanceof Error) return `${error.message} (${cause.message})`;
    return error.message;
  }
  return String(error);
}

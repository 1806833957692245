import type { TokenSource } from "../auth/token-source.ts";
import { CliError, exitCodes } from "../errors.ts";
import { idempotencyHeaderFor } from "./idempotency-key.ts";
import { errorFromResponse } from "./problem.ts";

export type QueryValue = string | number | boolean | undefined;

export interface RequestOptions {
  readonly query?: Readonly<Record<string, QueryValue>>;
  /** A body sent as is with its content type (YAML, CSV) or a value sent as JSON. */
  readonly body?: { readonly text: string; readonly contentType: string } | { readonly json: unknown };
}

export interface ApiClient {
  /** The parsed JSON answer of a 2xx response; throws a CliError for any other outcome. */
  json(method: string, path: string, options?: RequestOptions): Promise<unknown>;
  /** The text answer (CSV) of a 2xx response. */
  text(method: string, path: string, options?: RequestOptions): Promise<string>;
}

/** Long enough for a query preview against a slow source; a hung server still ends the command. */
const REQUEST_TIMEOUT_MS = 120_000;

/**
 * A request whose connection failed before any answer (reset, refused, DNS) is sent again, twice,
 * after these pauses: the server may have acted on it, so a write goes again with its key
 * (idempotency-key.ts) and is answered as the first time. A timeout is not retried: the server
 * is then likely still busy with it (a retry would get 409 idempotency.in_progress).
 */
const RETRY_DELAYS_MS = [500, 2000];

/** `/runbooks/{name}` with each segment escaped: names come from the user. */
export function apiPath(...segments: ReadonlyArray<string | number>): string {
  return segments.map((segment) => `/${encodeURIComponent(String(segment))}`).join("");
}

export function createApiClient(options: {
  readonly baseUrl: string;
  readonly tokens: TokenSource;
  readonly fetch: typeof fetch;
  /** Waits between attempts (the context's sleep; tests skip the wait). */
  readonly sleep: (ms: number) => Promise<void>;
}): ApiClient {
  async function send(method: string, path: string, request: RequestOptions = {}): Promise<string> {
    const url = new URL(`${options.baseUrl}${path}`);
    for (const [name, value] of Object.entries(request.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    const headers: Record<string, string> = {
      authorization: `Bearer ${await options.tokens.token()}`,
      accept: "application/json, application/problem+json, text/csv",
      // Drawn once here, before the attempts: every retry of this request carries the same key.
      ...idempotencyHeaderFor(method),
    };
    let body: string | undefined;
    if (request.body !== undefined && "json" in request.body) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(request.body.json);
    } else if (request.body !== undefined) {
      headers["content-type"] = request.body.contentType;
      body = request.body.text;
    }
    const response = await sendWithRetries(() =>
      options.fetch(url, { method, headers, body, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }),
    );
    const text = await response.text();
    if (!response.ok) throw errorFromResponse(response.status, response.statusText, text);
    return text;
  }

  async function sendWithRetries(attempt: () => Promise<Response>): Promise<Response> {
    for (let retry = 0; ; retry += 1) {
      try {
        return await attempt();
      } catch (error) {
        const failure = networkError(options.baseUrl, error);
        const delay = RETRY_DELAYS_MS[retry];
        if (delay === undefined || failure.code === "network.timeout") throw failure;
        await options.sleep(delay);
      }
    }
  }

  return {
    async json(method, path, request) {
      const text = await send(method, path, request);
      try {
        return JSON.parse(text) as unknown;
      } catch {
        throw new CliError(
          exitCodes.failed,
          "http.invalid_response",
          `${method} ${path} did not answer JSON`,
        );
      }
    },
    text: send,
  };
}

/** Says what failed and where, with the system error code (ECONNREFUSED…), never the token. */
function networkError(baseUrl: string, error: unknown): CliError {
  if (error instanceof Error && error.name === "TimeoutError") {
    return new CliError(
      exitCodes.failed,
      "network.timeout",
      `the admin API at ${baseUrl} did not answer within ${REQUEST_TIMEOUT_MS / 1000} s`,
    );
  }
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  const reason =
    typeof cause?.code === "string" ? cause.code : String(cause?.message ?? (error as Error).message);
  return new CliError(
    exitCodes.failed,
    "network.unreachable",
    `cannot reach the admin API at ${baseUrl} (${reason}): is the server running, and is api-url right?`,
  );
}

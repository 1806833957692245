import { request as undiciRequest } from "undici";

/**
 * The sidecar's HTTP API as our adapters use it: one base URL, the optional `dapr-api-token`, JSON
 * in and out, and errors that carry Dapr's status and error code but never a request or response
 * body (keys and payloads may hold member data).
 */
export interface DaprSidecarAddress {
  /** e.g. http://127.0.0.1:3500 (DAPR_HTTP_ENDPOINT, or http://127.0.0.1:$DAPR_HTTP_PORT). */
  readonly httpEndpoint: string;
  /** DAPR_API_TOKEN, when the sidecar requires one. */
  readonly apiToken?: string;
}

export class DaprApiError extends Error {
  constructor(
    readonly operation: string,
    readonly status: number,
    readonly errorCode: string | undefined,
  ) {
    super(`Dapr ${operation} answered ${status}${errorCode === undefined ? "" : ` ${errorCode}`}`);
    this.name = "DaprApiError";
  }
}

export interface DaprRequest {
  readonly method: "GET" | "POST" | "DELETE";
  readonly path: string;
  /** Names the call in errors and logs without its keys, e.g. "state.save". */
  readonly operation: string;
  readonly query?: Readonly<Record<string, string>>;
  readonly headers?: Readonly<Record<string, string>>;
  readonly json?: unknown;
  /** Statuses the caller handles itself (e.g. 409 on an ETag conflict) instead of an error. */
  readonly accept?: readonly number[];
  /** This call's time limit instead of the client's (a publish may take daprd's whole retry window). */
  readonly timeoutMs?: number;
}

/**
 * The sidecar's answer, its body already read (a `fetch` Response fits it too, which tests use).
 * Read whole because an unread body would hold its pooled connection.
 */
export interface DaprResponse {
  readonly status: number;
  readonly ok: boolean;
  readonly headers: { get(name: string): string | null };
  text(): Promise<string>;
  json(): Promise<unknown>;
}

export interface DaprHttp {
  readonly address: DaprSidecarAddress;
  request(request: DaprRequest): Promise<DaprResponse>;
}

export function createDaprHttp(address: DaprSidecarAddress, options: { timeoutMs?: number } = {}): DaprHttp {
  const base = address.httpEndpoint.replace(/\/+$/, "");
  const timeoutMs = options.timeoutMs ?? 30_000;
  return {
    address,
    async request(request) {
      const url = new URL(base + request.path);
      for (const [key, value] of Object.entries(request.query ?? {})) url.searchParams.set(key, value);
      const headers: Record<string, string> = { ...request.headers };
      if (address.apiToken !== undefined) headers["dapr-api-token"] = address.apiToken;
      let body: string | undefined;
      if (request.json !== undefined) {
        headers["content-type"] ??= "application/json";
        body = JSON.stringify(request.json);
      }
      // undici's request, not the global fetch (the same client underneath): a Dapr app makes
      // 15 sidecar calls per step, and fetch's WHATWG streams and objects cost ~4× the CPU per call
      // (ARCHITECTURE.md, "Hot path" sixth round).
      const answer = await undiciRequest(url, {
        method: request.method,
        headers,
        body,
        signal: AbortSignal.timeout(request.timeoutMs ?? timeoutMs),
      });
      const response = readResponse(answer.statusCode, answer.headers, await answer.body.text());
      if (response.ok || request.accept?.includes(response.status)) return response;
      throw new DaprApiError(request.operation, response.status, await errorCodeOf(response));
    },
  };
}

/** Dapr errors are `{"errorCode": "ERR_…", "message": "…"}`; only the code is kept. */
function readResponse(
  status: number,
  headers: Readonly<Record<string, string | string[] | undefined>>,
  text: string,
): DaprResponse {
  return {
    status,
    ok: status >= 200 && status < 300,
    headers: {
      get(name) {
        const value = headers[name.toLowerCase()];
        return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
      },
    },
    text: async () => text,
    json: async () => JSON.parse(text) as unknown,
  };
}

async function errorCodeOf(response: DaprResponse): Promise<string | undefined> {
  try {
    const parsed = (await response.json()) as { errorCode?: unknown };
    return typeof parsed.errorCode === "string" ? parsed.errorCode : undefined;
  } catch {
    return undefined;
  }
}

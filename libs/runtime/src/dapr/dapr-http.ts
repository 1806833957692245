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

export interface DaprHttp {
  readonly address: DaprSidecarAddress;
  request(request: DaprRequest): Promise<Response>;
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
      const response = await fetch(url, {
        method: request.method,
        headers,
        body,
        signal: AbortSignal.timeout(request.timeoutMs ?? timeoutMs),
      });
      if (response.ok || request.accept?.includes(response.status)) return response;
      throw new DaprApiError(request.operation, response.status, await errorCodeOf(response));
    },
  };
}

/** Dapr errors are `{"errorCode": "ERR_…", "message": "…"}`; only the code is kept. */
async function errorCodeOf(response: Response): Promise<string | undefined> {
  try {
    const parsed = (await response.json()) as { errorCode?: unknown };
    return typeof parsed.errorCode === "string" ? parsed.errorCode : undefined;
  } catch {
    return undefined;
  }
}

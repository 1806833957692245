import { currentSession } from "../auth/session.ts";
import { createActionKeys } from "./action-keys.ts";

/**
 * The dashboard's only way to the data: the admin API's JSON endpoints under /api, with the
 * session's bearer token. Error responses (RFC 9457 problem details) become {@link ApiError}
 * so pages can branch on the stable `code` and show `details.problems` (lines of a runbook).
 */
export const API_BASE = "/api";

export interface ProblemItem {
  readonly message: string;
  readonly line?: number;
  readonly column?: number;
  readonly path?: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    /** Stable reason code such as `runbook.invalid`; `network.failed` when no response came. */
    readonly code: string,
    message: string,
    /** The rest of the problem body (e.g. `problems`, `existingBatchId`). */
    readonly details: { readonly problems?: readonly ProblemItem[] } & Record<string, unknown>,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/** Listeners told about a 401 so the shell can send the user back to sign-in. */
const unauthorizedListeners = new Set<() => void>();
export function onUnauthorized(listener: () => void): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

/** GET (or any request) of `path` under /api, parsed as JSON; throws {@link ApiError}. */
export async function apiFetch<T>(path: string, init?: RequestInit): Promise<T> {
  const response = await apiRequest(path, init);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

/** The tab's user actions and their Idempotency-Keys (action-keys.ts). */
const actionKeys = createActionKeys();

/**
 * A write: JSON body (or a string/FormData/Blob as is), parsed JSON answer. It carries the
 * action's `Idempotency-Key`: the same as the last attempt's when that one got no answer and this
 * is the same request (a click retried after a network failure), else a new one.
 */
export async function apiSend<T = unknown>(
  method: "POST" | "PUT" | "PATCH" | "DELETE",
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
): Promise<T> {
  const raw =
    body === undefined || typeof body === "string" || body instanceof Blob || body instanceof FormData;
  const sent = body === undefined ? undefined : raw ? (body as BodyInit) : JSON.stringify(body);
  const key = actionKeys.begin({
    method,
    path,
    body: typeof sent === "string" ? sent : undefined,
    opaqueBody: sent !== undefined && typeof sent !== "string",
  });
  try {
    const answer = await apiFetch<T>(path, {
      method,
      headers: {
        ...(raw || body === undefined ? {} : { "Content-Type": "application/json" }),
        ...headers,
        "Idempotency-Key": key,
      },
      body: sent,
    });
    actionKeys.answered(key);
    return answer;
  } catch (error) {
    // No answer (the network), or the same key still at work (a double click): the action is
    // not settled, and a retry of it must carry this key.
    const unsettled =
      error instanceof ApiError &&
      (error.code === "network.failed" || error.code === "idempotency.in_progress");
    if (!unsettled) actionKeys.answered(key);
    throw error;
  }
}

/** The raw response (for Link headers and text bodies); throws {@link ApiError} when not ok. */
export async function apiRequest(path: string, init?: RequestInit): Promise<Response> {
  const headers = new Headers(init?.headers);
  const session = currentSession();
  if (session !== undefined) headers.set("Authorization", `Bearer ${session.token}`);
  if (!headers.has("Accept")) headers.set("Accept", "application/json");
  let response: Response;
  try {
    response = await fetch(`${API_BASE}${path}`, { ...init, headers });
  } catch (error) {
    throw new ApiError(0, "network.failed", `The admin API did not answer (${String(error)})`, {});
  }
  if (response.ok) return response;
  const apiError = await errorFromResponse(response);
  if (response.status === 401) for (const listener of unauthorizedListeners) listener();
  throw apiError;
}

async function errorFromResponse(response: Response): Promise<ApiError> {
  const text = await response.text();
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    const { code, detail, title, status: _status, type: _type, ...details } = body;
    return new ApiError(
      response.status,
      typeof code === "string" ? code : `http.${response.status}`,
      typeof detail === "string" ? detail : typeof title === "string" ? title : response.statusText,
      details,
    );
  } catch {
    return new ApiError(response.status, `http.${response.status}`, text || response.statusText, {});
  }
}

/** The `rel="next"` target of a Link header, relative to /api (for paging and event polling). */
export function nextLink(response: Response): string | undefined {
  const header = response.headers.get("Link");
  const match = header?.match(/<([^>]+)>\s*;\s*rel="?next"?/);
  if (match?.[1] === undefined) return undefined;
  const url = new URL(match[1], window.location.origin);
  const path = url.pathname.startsWith(API_BASE) ? url.pathname.slice(API_BASE.length) : url.pathname;
  return `${path}${url.search}`;
}

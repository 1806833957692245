import { GraphError } from "@microsoft/microsoft-graph-client";
import {
  MatoolkitError,
  NonRetriableError,
  reasonCodes,
  RetryAfterError,
  type ReasonCode,
} from "@matoolkit/domain";
import { graphRefusalOf } from "./graph-refusals.ts";

/**
 * Turns what the Graph SDK throws into the worker's errors: a stable reason code and the retry
 * policy in the error class (429 and 503/504 with Retry-After → RetryAfterError `graph.throttled`,
 * other 5xx and network failures → transient `graph.unavailable`, the rest permanent; refusals
 * that Graph's generic codes do not tell apart get codes of their own, see graph-refusals.ts).
 *
 * Messages name the operation (ids in the path replaced by `{id}`) and Graph's error code, never
 * Graph's message or body: those quote UPNs, addresses and property values.
 */
export interface GraphErrorInfo {
  /** HTTP status; 0 when no response arrived (network failure). */
  readonly status: number;
  /** Graph's `error.code`, e.g. `Request_BadRequest`; for network failures the error's name. */
  readonly code: string;
  /** Graph's `error.message`: for branching only, may hold member data, never log it. */
  readonly message: string;
  /** `error.details[].code` / `target`, e.g. `ObjectConflict` on `userPrincipalName`. */
  readonly details: readonly { readonly code: string; readonly target?: string }[];
}

const infoByError = new WeakMap<MatoolkitError, GraphErrorInfo>();

/** The Graph error behind a mapped error, or undefined when it did not come from Graph. */
export function graphErrorOf(error: unknown): GraphErrorInfo | undefined {
  return error instanceof MatoolkitError ? infoByError.get(error) : undefined;
}

type Outcome =
  | { kind: "throttled"; retryAfterSeconds: number | undefined }
  | { kind: "unavailable" }
  | { kind: "permanent"; reason: PermanentReason | ReasonCode; explanation?: string };

type PermanentReason =
  | typeof reasonCodes.graphNotFound
  | typeof reasonCodes.graphForbidden
  | typeof reasonCodes.graphUnauthorized
  | typeof reasonCodes.graphBadRequest
  | typeof reasonCodes.graphConflict;

/** `operation` is e.g. `GET /v1.0/users/{id}` (see operationName). */
export function mapGraphError(error: GraphError, operation: string): MatoolkitError {
  const info = infoOf(error);
  const refusal = graphRefusalOf(info.status, info.message);
  const outcome: Outcome =
    refusal === undefined
      ? classify(info.status, retryAfterOf(error.headers))
      : { kind: "permanent", reason: refusal.reason, explanation: refusal.explanation };
  const explained = outcome.kind === "permanent" && outcome.explanation !== undefined;
  const message =
    info.status === 0
      ? `Graph ${operation} failed: no response (${info.code})`
      : explained
        ? `Graph ${operation} failed: ${info.status}: ${outcome.explanation}`
        : `Graph ${operation} failed: ${info.status} ${info.code}`;
  let mapped: MatoolkitError;
  switch (outcome.kind) {
    case "throttled":
      mapped =
        outcome.retryAfterSeconds === undefined
          ? new MatoolkitError(reasonCodes.graphThrottled, message, { cause: error })
          : new RetryAfterError(reasonCodes.graphThrottled, message, outcome.retryAfterSeconds, {
              cause: error,
            });
      break;
    case "unavailable":
      mapped = new MatoolkitError(reasonCodes.graphUnavailable, message, { cause: error });
      break;
    case "permanent":
      mapped = new NonRetriableError(outcome.reason, message, { cause: error });
      break;
    default: {
      const unreachable: never = outcome;
      throw new Error(`Unknown outcome ${String(unreachable)}`);
    }
  }
  infoByError.set(mapped, info);
  return mapped;
}

function classify(status: number, retryAfterSeconds: number | undefined): Outcome {
  if (status === 429) return { kind: "throttled", retryAfterSeconds };
  // A 503/504 with Retry-After is Graph's other way of throttling (documented in "throttling").
  if ((status === 503 || status === 504) && retryAfterSeconds !== undefined) {
    return { kind: "throttled", retryAfterSeconds };
  }
  // 0: no response at all (refused, reset, DNS, timeout); 408: the server gave up waiting.
  if (status <= 0 || status === 408 || status >= 500) return { kind: "unavailable" };
  if (status === 404) return { kind: "permanent", reason: reasonCodes.graphNotFound };
  if (status === 403) return { kind: "permanent", reason: reasonCodes.graphForbidden };
  if (status === 401) return { kind: "permanent", reason: reasonCodes.graphUnauthorized };
  if (status === 409) return { kind: "permanent", reason: reasonCodes.graphConflict };
  return { kind: "permanent", reason: reasonCodes.graphBadRequest };
}

function infoOf(error: GraphError): GraphErrorInfo {
  const status = Number.isInteger(error.statusCode) && error.statusCode > 0 ? error.statusCode : 0;
  const parsed = parseBody(error.body);
  return {
    status,
    code: safeCode(error.code ?? parsed?.code) ?? (status === 0 ? "NetworkError" : "UnknownError"),
    message: typeof error.message === "string" ? error.message : "",
    details: parsed?.details ?? [],
  };
}

/** The SDK keeps the `error` object of the response body as a JSON string. */
function parseBody(body: unknown): { code?: string; details?: GraphErrorInfo["details"] } | undefined {
  let value: unknown = body;
  if (typeof body === "string") {
    try {
      value = JSON.parse(body);
    } catch {
      return undefined;
    }
  }
  if (typeof value !== "object" || value === null) return undefined;
  const record = value as { code?: unknown; details?: unknown };
  const details = Array.isArray(record.details)
    ? record.details
        .filter((detail): detail is { code: string; target?: unknown } => typeof detail?.code === "string")
        .map((detail) => ({
          code: detail.code,
          ...(typeof detail.target === "string" ? { target: detail.target } : {}),
        }))
    : [];
  return { code: typeof record.code === "string" ? record.code : undefined, details };
}

/** Error codes are identifiers; anything else (a message in the wrong place) is not echoed. */
function safeCode(code: unknown): string | undefined {
  return typeof code === "string" && /^[A-Za-z][\w.]{0,80}$/.test(code) ? code : undefined;
}

/** Retry-After in seconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function retryAfterOf(headers: Headers | undefined, now: () => number = Date.now): number | undefined {
  const value = headers?.get("retry-after")?.trim();
  if (value === undefined || value === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - now()) / 1000);
}

/**
 * `METHOD /version/path` with every segment that can identify an object (GUIDs, UPNs, anything
 * but an OData name such as `members`, `$ref` or `microsoft.graph.user`) replaced by `{id}`.
 */
export function operationName(method: string, version: string, path: string): string {
  const segments = path
    .split("?")[0]!
    .split("/")
    .filter((segment) => segment !== "")
    .map((segment) => (/^\$?[A-Za-z][A-Za-z.]*$/.test(segment) ? segment : "{id}"));
  return `${method} /${version}/${segments.join("/")}`;
}

export { GraphError };

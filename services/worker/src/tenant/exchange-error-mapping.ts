import {
  MatoolkitError,
  NonRetriableError,
  RetryAfterError,
  reasonCodes,
  type ReasonCode,
} from "@matoolkit/domain";

/**
 * Turns a failed InvokeCommand response into the `exchange.*` error a function can act on.
 *
 * The admin API reports cmdlet failures as OData errors whose message is
 * `<ErrorId>|<exception type>|<text>`: the exception type says what went wrong, the text names
 * the objects involved (identities, addresses). So errors are classified by type and status, and
 * their messages carry the cmdlet and the exception type only, never the text.
 */
export interface ExchangeErrorInfo {
  readonly status: number;
  /** e.g. `Microsoft.Exchange.Configuration.Tasks.ManagementObjectNotFoundException`. */
  readonly exceptionType: string | undefined;
  /** The service's error id (`Ex6F9304`), for support cases. */
  readonly errorId: string | undefined;
}

const infoByError = new WeakMap<Error, ExchangeErrorInfo>();

/** What the service said, for functions that treat one specific failure as "already done". */
export function exchangeErrorOf(error: unknown): ExchangeErrorInfo | undefined {
  return error instanceof Error ? infoByError.get(error) : undefined;
}

/** Reads the exception type and error id out of an admin API error body (any shape tolerated). */
export function parseExchangeErrorBody(body: unknown): {
  exceptionType?: string;
  errorId?: string;
  text?: string;
} {
  const error = (body as { error?: Record<string, unknown> } | null)?.error;
  if (error === undefined || error === null || typeof error !== "object") return {};
  const inner = (error.innererror as { internalexception?: { type?: unknown } } | undefined)
    ?.internalexception;
  const message = typeof error.message === "string" ? error.message : "";
  const parts = message.split("|");
  const fromMessage = parts.length >= 3 ? parts[1]!.trim() : undefined;
  const candidate = typeof inner?.type === "string" && inner.type !== "" ? inner.type : fromMessage;
  return {
    // Only something shaped like a .NET type name is kept: it ends up in operator-visible messages.
    exceptionType: candidate !== undefined && /^[\w.`+]{1,200}$/.test(candidate) ? candidate : undefined,
    errorId: parts.length >= 3 && /^\w{1,40}$/.test(parts[0]!.trim()) ? parts[0]!.trim() : undefined,
    text: parts.length >= 3 ? parts.slice(2).join("|") : message,
  };
}

/** Builds the mapped error for an HTTP error response of `cmdlet`. */
export function exchangeErrorFromResponse(
  cmdlet: string,
  status: number,
  retryAfterHeader: string | null,
  body: unknown,
): MatoolkitError {
  const { exceptionType, errorId, text } = parseExchangeErrorBody(body);
  const what = exceptionType === undefined ? `HTTP ${status}` : `HTTP ${status}, ${exceptionType}`;
  const message = `${cmdlet} failed (${what})`;
  const retryAfter = parseRetryAfter(retryAfterHeader);
  const error = build(
    classify(status, exceptionType, text ?? "", retryAfter !== undefined),
    message,
    retryAfter,
  );
  infoByError.set(error, { status, exceptionType, errorId });
  return error;
}

type Classification =
  | { kind: "throttled" }
  | { kind: "transient"; reason: ReasonCode }
  | { kind: "permanent"; reason: ReasonCode };

function classify(
  status: number,
  exceptionType: string | undefined,
  text: string,
  hasRetryAfter: boolean,
): Classification {
  if (status === 429) return { kind: "throttled" };
  if ((status === 503 || status === 504) && hasRetryAfter) return { kind: "throttled" };
  if (status === 401) return { kind: "permanent", reason: reasonCodes.exchangeUnauthorized };
  if (status === 403) return { kind: "permanent", reason: reasonCodes.exchangeForbidden };
  const byType = classifyException(exceptionType ?? "", text);
  if (byType !== undefined) return byType;
  if (status >= 500) return { kind: "transient", reason: reasonCodes.exchangeUnavailable };
  return { kind: "permanent", reason: reasonCodes.exchangeBadRequest };
}

/** Cmdlet exceptions mean the same whatever HTTP status carried them (the service varies it). */
function classifyException(type: string, text: string): Classification | undefined {
  const name = type.split(".").at(-1) ?? "";
  if (name === "ManagementObjectNotFoundException")
    return { kind: "permanent", reason: reasonCodes.exchangeNotFound };
  if (
    name === "ProxyAddressExistsException" ||
    name === "ADObjectAlreadyExistsException" ||
    name === "MemberAlreadyExistsException" ||
    /is already being used by/i.test(text)
  ) {
    return { kind: "permanent", reason: reasonCodes.exchangeConflict };
  }
  if (/Throttl/i.test(name)) return { kind: "throttled" };
  if (
    /ParameterBinding|Validation|Argument|CommandNotFound|AmbiguousException|TaskException|InvalidOperation/.test(
      name,
    )
  ) {
    return { kind: "permanent", reason: reasonCodes.exchangeBadRequest };
  }
  return undefined;
}

function build(
  classification: Classification,
  message: string,
  retryAfter: number | undefined,
): MatoolkitError {
  switch (classification.kind) {
    case "throttled":
      return retryAfter === undefined
        ? new MatoolkitError(reasonCodes.exchangeThrottled, message)
        : new RetryAfterError(reasonCodes.exchangeThrottled, message, retryAfter);
    case "transient":
      return new MatoolkitError(classification.reason, message);
    case "permanent":
      return new NonRetriableError(classification.reason, message);
    default: {
      const unreachable: never = classification;
      throw new Error(`Unknown classification ${JSON.stringify(unreachable)}`);
    }
  }
}

/** Retry-After is seconds or an HTTP date; anything else is ignored (back-off applies instead). */
export function parseRetryAfter(header: string | null, now: number = Date.now()): number | undefined {
  if (header === null || header.trim() === "") return undefined;
  const trimmed = header.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - now) / 1000);
}

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
 * The admin API reports a cmdlet failure as an OData error carrying the string
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

/**
 * Reads the exception type and error id out of an admin API error body (any shape tolerated).
 *
 * Where the typed string is, in the order the clients of the same endpoint look for it
 * (GreyCorbel/ExoHelper `Commands/Internal/Get-ExoException.ps1`, KelvinTegelaar/CIPP-API
 * `Modules/CIPPCore/Public/GraphHelper/New-ExoRequest.ps1`):
 * 1. `error.details[].message`: where the service puts it; `error.message` is then the generic
 *    "Error executing cmdlet" (a captured body: Microsoft365DSC/Microsoft365DSC issue #2998);
 * 2. `error.message`, for answers that carry it there;
 * 3. `error.innererror.internalexception` (its `message`, or its `type` when that names the
 *    exception), the last place ExoHelper looks.
 */
export function parseExchangeErrorBody(body: unknown): {
  exceptionType?: string;
  errorId?: string;
  text?: string;
} {
  const error = (body as { error?: unknown } | null)?.error;
  if (error === undefined || error === null || typeof error !== "object") return {};
  const { details, message, innererror } = error as Record<string, unknown>;
  const inner = (innererror as { internalexception?: unknown } | undefined)?.internalexception as
    { message?: unknown; type?: unknown } | undefined;
  const typed = [
    ...(Array.isArray(details)
      ? details.map((detail) => (detail as { message?: unknown } | null)?.message)
      : []),
    message,
    inner?.message,
  ]
    .map(typedErrorOf)
    .find((found) => found !== undefined);
  if (typed !== undefined) return typed;
  const innerType = typeof inner?.type === "string" ? inner.type : undefined;
  return {
    ...(innerType !== undefined && isTypeName(innerType) ? { exceptionType: innerType } : {}),
    ...(typeof message === "string" ? { text: message } : {}),
  };
}

/** `<ErrorId>|<exception type>|<text>`, or undefined when `value` is not shaped so. */
function typedErrorOf(
  value: unknown,
): { exceptionType?: string; errorId?: string; text: string } | undefined {
  if (typeof value !== "string") return undefined;
  const parts = value.split("|");
  if (parts.length < 3) return undefined;
  const type = parts[1]!.trim();
  const id = parts[0]!.trim();
  // Only something shaped like a .NET type name is kept: it ends up in operator-visible messages.
  if (!isTypeName(type)) return undefined;
  return {
    exceptionType: type,
    ...(/^\w{1,40}$/.test(id) ? { errorId: id } : {}),
    text: parts.slice(2).join("|"),
  };
}

function isTypeName(value: string): boolean {
  return /^[\w.`+]{1,200}$/.test(value) && value.includes(".");
}

/**
 * Exchange Online's per-tenant concurrency refusal: a plain-text body, not an OData error,
 * "You have reached the maximum number of concurrent requests per tenant. Please wait and try
 * again." Clients of the same endpoint wait and retry on that text whatever the HTTP status
 * (GreyCorbel/ExoHelper `Commands/Public/Invoke-ExoCommand.ps1`), so it is throttling here too.
 */
const concurrencyRefusal = /maximum number of concurrent requests per tenant/i;

/**
 * Builds the mapped error for an HTTP error response of `cmdlet`. `body` is the parsed JSON, or
 * the text when the service answered with something else.
 */
export function exchangeErrorFromResponse(
  cmdlet: string,
  status: number,
  retryAfterHeader: string | null,
  body: unknown,
): MatoolkitError {
  if (typeof body === "string" && concurrencyRefusal.test(body)) {
    const retryAfter = parseRetryAfter(retryAfterHeader);
    const message = `${cmdlet} failed (HTTP ${status}, per-tenant concurrency limit reached)`;
    const error = build({ kind: "throttled" }, message, retryAfter);
    infoByError.set(error, { status, exceptionType: undefined, errorId: undefined });
    return error;
  }
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
  if (status === 429 || concurrencyRefusal.test(text)) return { kind: "throttled" };
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

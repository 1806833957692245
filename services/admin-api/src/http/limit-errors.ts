import { ApiError } from "./api-error.ts";
import { formatBytes, formatCount, requestLimitVariables, type RowLimit } from "./request-limits.ts";

/**
 * The answers of the request limits (request-limits.ts): each names the value, the limit, the
 * route and the setting that raises it, so the caller knows whether to split the file or ask the
 * operator of the server. Never a value of the body (member data).
 */
export function tooManyRows(rows: number, limit: RowLimit): ApiError {
  return new ApiError(
    400,
    "member_data.too_many_rows",
    `The upload has ${formatCount(rows)} member rows; the limit for ${limit.route} is ` +
      `${formatCount(limit.max)} (${requestLimitVariables.memberRows}). Split it into several uploads.`,
  );
}

export function bodyTooLarge(
  bytes: number | undefined,
  limit: number,
  route: string,
  configurable: boolean,
): ApiError {
  const size =
    bytes === undefined
      ? "The body is larger than the limit"
      : `The body is ${formatBytes(bytes)} (${formatCount(bytes)} bytes)`;
  const setting = configurable ? ` (${requestLimitVariables.memberUploadBytes})` : "";
  return new ApiError(
    413,
    "payload.too_large",
    `${size}; the limit for ${route} is ${formatBytes(limit)}${setting}`,
  );
}

export function tooManyInFlight(scope: "caller" | "server", limit: number, route: string): ApiError {
  const who =
    scope === "caller"
      ? `You already have ${formatCount(limit)} heavy requests running (${requestLimitVariables.heavyPerCaller})`
      : `The server already runs ${formatCount(limit)} heavy requests (${requestLimitVariables.heavyTotal})`;
  return new ApiError(
    429,
    "request.too_many_in_flight",
    `${who}; ${route} waits for one of them to finish. Retry after the Retry-After seconds.`,
  );
}

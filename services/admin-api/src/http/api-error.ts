import type { ErrorRequestHandler } from "express";
import type { Logger } from "@matoolkit/runtime";
import { sanitizeErrorMessage } from "@matoolkit/domain";

/**
 * Every error response has one shape: `{ "error": { "code", "message", "details"? } }`, with a
 * stable code a script can branch on and a message a person can act on.
 */
export type ApiErrorCode =
  | "validation.invalid_input"
  | "runbook.invalid"
  | "member_data.invalid"
  | "resource.not_found"
  | "state.conflict"
  | "payload.too_large"
  | "datasource.failed"
  | "unexpected.exception";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ApiErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

export const badRequest = (message: string, details?: unknown) =>
  new ApiError(400, "validation.invalid_input", message, details);
export const notFound = (message: string) => new ApiError(404, "resource.not_found", message);
export const conflict = (message: string, details?: unknown) =>
  new ApiError(409, "state.conflict", message, details);

export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, _req, res, _next) => {
    if (error instanceof ApiError) {
      res
        .status(error.status)
        .json({ error: { code: error.code, message: error.message, details: error.details } });
      return;
    }
    const status = httpStatusOfBodyParserError(error);
    if (status !== undefined) {
      const code = status === 413 ? "payload.too_large" : "validation.invalid_input";
      res
        .status(status)
        .json({ error: { code, message: sanitizeErrorMessage(String((error as Error).message)) } });
      return;
    }
    logger.error(
      { reason: "unexpected.exception", err: sanitizeErrorMessage(String(error)) },
      "request failed",
    );
    res
      .status(500)
      .json({ error: { code: "unexpected.exception", message: "Internal error; see the server log" } });
  };
}

/** body-parser errors carry an HTTP status (400 bad JSON, 413 too large, 415 charset). */
function httpStatusOfBodyParserError(error: unknown): number | undefined {
  const status = (error as { status?: unknown; type?: unknown } | null)?.status;
  const type = (error as { type?: unknown } | null)?.type;
  return typeof status === "number" && status >= 400 && status < 500 && typeof type === "string"
    ? status
    : undefined;
}

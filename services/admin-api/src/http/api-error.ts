import type { ErrorRequestHandler } from "express";
import type { Logger } from "@matoolkit/runtime";
import { sanitizeErrorMessage } from "@matoolkit/domain";
import { problemDetails, sendProblem, type ProblemExtensions } from "./problem-details.ts";
import type { ProblemCode, StatusOf } from "./problem-types.ts";

/**
 * Every error response is an RFC 9457 problem (see problem-details.ts): a stable `code` a script
 * can branch on and a `detail` a person can act on. The status must be one the code's problem
 * type lists (problem-types.ts), which the type parameter enforces at compile time.
 */
export type ApiErrorCode = Exclude<ProblemCode, `auth.${string}`>;

export class ApiError<C extends ApiErrorCode = ApiErrorCode> extends Error {
  constructor(
    readonly status: StatusOf<C>,
    readonly code: C,
    message: string,
    readonly extensions?: ProblemExtensions,
  ) {
    super(message);
  }
}

export const badRequest = (message: string, extensions?: ProblemExtensions) =>
  new ApiError(400, "validation.invalid_input", message, extensions);
export const notFound = (message: string) => new ApiError(404, "resource.not_found", message);
export const conflict = (message: string, extensions?: ProblemExtensions) =>
  new ApiError(409, "state.conflict", message, extensions);

export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, _req, res, _next) => {
    if (error instanceof ApiError) {
      const { code, status, extensions } = error as ApiError;
      return sendProblem(res, problemDetails(code, error.message, { status, extensions }));
    }
    const refusedText = refusedTextMessage(error);
    if (refusedText !== undefined) {
      return sendProblem(res, problemDetails("validation.invalid_input", refusedText));
    }
    const bodyParserCode = codeOfBodyParserError(error);
    if (bodyParserCode !== undefined) {
      return sendProblem(
        res,
        problemDetails(bodyParserCode, sanitizeErrorMessage(String((error as Error).message))),
      );
    }
    logger.error(
      { reason: "unexpected.exception", err: sanitizeErrorMessage(String(error)) },
      "request failed",
    );
    sendProblem(res, problemDetails("unexpected.exception", "Internal error; see the server log"));
  };
}

/**
 * body-parser errors carry an HTTP status and a `type` (413 too large, 415 unsupported charset
 * or encoding, 400 for the rest: bad JSON, aborted request).
 */
function codeOfBodyParserError(error: unknown): ApiErrorCode | undefined {
  const { status, type } = (error ?? {}) as { status?: unknown; type?: unknown };
  if (typeof status !== "number" || status < 400 || status >= 500 || typeof type !== "string") {
    return undefined;
  }
  if (status === 413) return "payload.too_large";
  if (status === 415) return "payload.unsupported";
  return "validation.invalid_input";
}

/**
 * Text the schemas let through but cannot be used: a path segment that is not percent-encoded
 * UTF-8 (the router's URIError, whose message quotes the segment), or text PostgreSQL refuses
 * (SQLSTATE 22021 character_not_in_repertoire, e.g. U+0000; 22P05 untranslatable_character, e.g.
 * `\u0000` in jsonb). The caller's mistake, so a 400, described without echoing the value.
 */
function refusedTextMessage(error: unknown): string | undefined {
  const { status, code } = (error ?? {}) as { status?: unknown; code?: unknown };
  if (error instanceof URIError && status === 400) {
    return "A path parameter is not valid percent-encoded UTF-8";
  }
  if (code === "22021" || code === "22P05") {
    return "The request contains text that cannot be stored: NUL (U+0000) or invalid Unicode characters";
  }
  return undefined;
}

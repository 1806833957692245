import { sanitizeErrorMessage } from "@matoolkit/domain";

export interface SafeSerializedError {
  readonly type: string;
  readonly message: string;
  readonly reason?: string;
  readonly stack?: string;
  readonly cause?: SafeSerializedError;
}

const maxCauseDepth = 3;

/**
 * Log serializer for errors. Messages pass through the domain sanitizer (emails, tokens and
 * passwords redacted); the stack keeps only its `at …` frames, because its first line repeats
 * the raw message. Causes are followed a few levels, sanitized the same way.
 */
export function serializeErrorSafely(error: unknown, depth = 0): SafeSerializedError {
  if (!(error instanceof Error)) {
    return { type: typeof error, message: typeof error === "string" ? sanitizeErrorMessage(error, 500) : "" };
  }
  const reason = (error as { reason?: unknown }).reason;
  const frames = (error.stack ?? "")
    .split("\n")
    .filter((line) => line.trimStart().startsWith("at "))
    .join("\n");
  return {
    type: error.name,
    message: sanitizeErrorMessage(error.message, 500),
    ...(typeof reason === "string" ? { reason } : {}),
    ...(frames.length > 0 ? { stack: frames } : {}),
    ...(error.cause !== undefined && depth < maxCauseDepth
      ? { cause: serializeErrorSafely(error.cause, depth + 1) }
      : {}),
  };
}

import { pino } from "pino";
import type { DestinationStream, Logger as PinoLogger } from "pino";
import { serializeErrorSafely } from "./serialize-error-safely.ts";

export type Logger = PinoLogger;
export type LogLevel = "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";

export interface LoggerOptions {
  readonly level: LogLevel;
  /** Service or component name, on every line (`name`). */
  readonly name: string;
  /** Where lines go; stdout when absent. Tests pass a stream to read what was logged. */
  readonly destination?: DestinationStream;
}

/**
 * Keys whose values never reach a log line (000 "Security Model": no secrets, no member PII in
 * telemetry). Each key is listed at the top level and one level down (`*.key`), which is where
 * callers put them (`logger.info({ job: { Parameters } })`); deeper nesting is not covered, so
 * log identifiers (ids, names of steps) rather than whole objects.
 */
const redactedKeys = [
  // Bearer tokens / basic credentials of HTTP requests (admin API, Graph calls).
  "authorization",
  "Authorization",
  "cookie",
  // Credentials and tokens under their usual names.
  "password",
  "token",
  "accessToken",
  "access_token",
  "refreshToken",
  "refresh_token",
  "idToken",
  "clientSecret",
  "client_secret",
  "secret",
  "apiKey",
  // Connection strings and database URLs carry passwords or shared access keys.
  "connectionString",
  "databaseUrl",
  // Worker job parameters (000 WorkerJobMessage.Parameters): resolved member data (UPN, names).
  "Parameters",
  "params",
  "params_json",
  "paramsJson",
  // A member's data-source row (batch_members.data_json): PII by definition.
  "data_json",
  "dataJson",
  // A member key is the member's email or UPN.
  "memberKey",
  "MemberKey",
  // Worker output (000 WorkerResultMessage.Result, worker_data_json, result_json) may echo member data.
  "Result",
  "worker_data_json",
  "workerDataJson",
  "result_json",
  "resultJson",
];

export const redactedLogPaths: readonly string[] = [
  ...redactedKeys,
  ...redactedKeys.map((key) => `*.${key}`),
  // HTTP request logs put headers two levels down.
  "req.headers.authorization",
  "req.headers.cookie",
];

export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level,
      name: options.name,
      redact: { paths: [...redactedLogPaths], censor: "[redacted]" },
      // Error messages may quote member data or credentials; see serialize-error-safely.ts.
      serializers: { err: serializeErrorSafely, error: serializeErrorSafely },
    },
    options.destination,
  );
}

import { pino } from "pino";
import type { Bindings, ChildLoggerOptions, DestinationStream, Logger as PinoLogger } from "pino";
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

/** Censored values read this (pino's own default is "[Redacted]"). */
const CENSOR = "[redacted]";
const nestedKeys: ReadonlySet<string> = new Set(redactedKeys);

/**
 * Each key is redacted at the top level by pino's `redact` and one level down (`*.key`) by
 * `censorNested` (pino's log formatter, and on each child's bindings), rather than by pino's
 * wildcard paths: a wildcard path makes pino pass EVERY value of every line and of every child's
 * bindings through @pinojs/redact (0.4), which parses each of the paths again on each call. That
 * was ~60 µs per `logger.child(...)` with five identifiers, the worker's per-job child logger,
 * 9 % of the main thread in bench:orchestrator's CPU profile (issue 29); the formatter looks each
 * nested key up in a Set.
 */
export function createLogger(options: LoggerOptions): Logger {
  const logger = pino(
    {
      level: options.level,
      name: options.name,
      redact: {
        // HTTP request logs put headers two levels down.
        paths: [...redactedKeys, "req.headers.authorization", "req.headers.cookie"],
        censor: CENSOR,
      },
      formatters: { log: censorNested },
      // Error messages may quote member data or credentials; see serialize-error-safely.ts.
      serializers: { err: serializeErrorSafely, error: serializeErrorSafely },
    },
    options.destination,
  );
  // A child's bindings skip the formatters (pino resets `formatters.bindings` for children):
  // censored here. Children are created from their parent's prototype, so every descendant
  // calls this `child` too.
  type Child = (this: Logger, bindings: Bindings, options?: ChildLoggerOptions) => Logger;
  const pinoChild = logger.child as unknown as Child;
  function child(this: Logger, bindings: Bindings, childOptions?: ChildLoggerOptions): Logger {
    return pinoChild.call(this, censorNested(bindings), childOptions);
  }
  logger.child = child as unknown as typeof logger.child;
  return logger;
}

/**
 * `object` with every redacted key of its object values censored (`*.key`), copying only what
 * changes: the caller's objects are never modified, and a line with nothing to censor is passed
 * on as it is. A censored object keeps its prototype (an Error stays an Error for its serializer).
 */
export function censorNested<T extends Record<string, unknown>>(object: T): T {
  let copy: Record<string, unknown> | undefined;
  for (const key of Object.keys(object)) {
    const value = object[key];
    if (value === null || typeof value !== "object" || Array.isArray(value)) continue;
    const secretKeys = Object.keys(value).filter((inner) => nestedKeys.has(inner));
    if (secretKeys.length === 0) continue;
    // Every own property, enumerable or not (an Error's message and stack are not), the censored
    // ones replaced whatever their descriptor said (a read-only property included).
    const properties = Object.getOwnPropertyDescriptors(value);
    for (const inner of secretKeys)
      properties[inner] = { value: CENSOR, enumerable: true, writable: true, configurable: true };
    (copy ??= { ...object })[key] = Object.create(Object.getPrototypeOf(value) as object | null, properties);
  }
  return (copy ?? object) as T;
}

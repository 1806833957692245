/**
 * Whether an idempotency store call failed because the store could not be reached (PostgreSQL
 * restarting or killed, the Dapr sidecar or its state store down), as opposed to refusing the
 * call itself. Only the former is worth retrying until it passes: a refusal (a value PostgreSQL
 * cannot store, a bug) fails the same way every time, and retrying it would hold the job forever.
 */
export function isStoreUnavailable(error: unknown): boolean {
  // Drivers wrap the system error: undici puts it in `cause`, Node's happy-eyeballs connect in
  // an AggregateError's `errors`. Follow both, a few levels deep.
  const pending: unknown[] = [error];
  for (let seen = 0; pending.length > 0 && seen < 10; seen++) {
    const current = pending.shift();
    if (!(current instanceof Error)) continue;
    if (looksUnavailable(current)) return true;
    if (current.cause !== undefined) pending.push(current.cause);
    if (current instanceof AggregateError) pending.push(...(current.errors as unknown[]));
  }
  return false;
}

function looksUnavailable(error: Error): boolean {
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && (NETWORK_CODES.has(code) || isUnavailableSqlState(code))) return true;
  // PostgreSQL refusing the connection itself (FATAL, so never a statement's own refusal):
  // `database "…" is not currently accepting connections` is 55000 (ALLOW_CONNECTIONS false,
  // what an operator or the outage drill sets while a database is out of service).
  if (code === "55000" && (error as { severity?: unknown }).severity === "FATAL") return true;
  // node-postgres reports a connection the server closed (killed, restarted) without a code.
  if (PG_CONNECTION_MESSAGES.some((pattern) => pattern.test(error.message))) return true;
  // Fetch's own deadline (AbortSignal.timeout) on a sidecar call that got no answer.
  if (error.name === "TimeoutError") return true;
  // DaprApiError (libs/runtime dapr-http.ts): the sidecar answered, but its state store failed.
  const status = (error as { status?: unknown }).status;
  return error.name === "DaprApiError" && typeof status === "number" && (status >= 500 || status === 429);
}

const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENETDOWN",
  "ENOTFOUND",
  "EAI_AGAIN",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/**
 * SQLSTATE classes 08 (connection exception) and 53 (insufficient resources: too many
 * connections, disk full), and 57P01-57P03 (the server shutting down, crashed, or starting).
 */
function isUnavailableSqlState(code: string): boolean {
  return /^(08|53)[0-9A-Z]{3}$/u.test(code) || /^57P0[123]$/u.test(code);
}

const PG_CONNECTION_MESSAGES = [
  /^Connection terminated/u,
  /^timeout exceeded when trying to connect$/u,
  /^Client has encountered a connection error and is not queryable$/u,
];

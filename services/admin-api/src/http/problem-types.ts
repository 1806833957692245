import type { AuthErrorCode } from "@matoolkit/auth";

/**
 * The one place that maps an error code to its RFC 9457 problem type: the HTTP status(es) it is
 * sent with, the fixed human title, and what it means. The code is the stable contract (scripts
 * branch on it, never on `detail`); codes are never renamed, only added (see @matoolkit/domain
 * reason codes, which share the same names where the reason is the same).
 *
 * A code has one status except where one reason legitimately arises at two layers:
 * `member_data.invalid` is 400 for an uploaded CSV (the request is wrong) and 422 for a source
 * row the query preview cannot use (the request is fine, the data is not).
 */
interface ProblemType {
  /** The first status is the usual one; {@link ApiError} may only use the listed ones. */
  readonly statuses: readonly [number, ...number[]];
  readonly title: string;
  readonly description: string;
}

export const problemTypes = {
  "validation.invalid_input": {
    statuses: [400],
    title: "Invalid request",
    description: "A parameter, query value or body is missing or malformed; `detail` names which.",
  },
  "runbook.invalid": {
    statuses: [400],
    title: "Invalid runbook",
    description: "The runbook YAML failed validation; `problems` lists each with line, column and path.",
  },
  "member_data.invalid": {
    statuses: [400, 422],
    title: "Invalid member data",
    description:
      "Member rows cannot be used: a CSV upload (400, `problems` lists lines) or a source row in a " +
      "query preview (422). Lines and columns are named, member values never.",
  },
  "resource.not_found": {
    statuses: [404],
    title: "Not found",
    description: "No such endpoint, runbook, version or batch.",
  },
  "state.conflict": {
    statuses: [409],
    title: "Conflict with the current state",
    description:
      "The resource is in a state that does not allow the operation (e.g. advancing a batch that has finished).",
  },
  "batch.duplicate": {
    statuses: [409],
    title: "Duplicate batch",
    description:
      "A batch of the same runbook with the same CSV was created moments ago and is not cancelled; " +
      "`existingBatchId` names it. Nothing was written. Repeat with `allowDuplicate=true` to create another.",
  },
  "idempotency.in_progress": {
    statuses: [409],
    title: "Request in progress",
    description:
      "A request with the same Idempotency-Key is still being processed; retry once it has finished " +
      "to get its answer.",
  },
  "idempotency.key_reused": {
    statuses: [422],
    title: "Idempotency-Key reused",
    description:
      "The Idempotency-Key was already used (by the same caller, in the last 24 hours) for a " +
      "different request: another method, path, query or body. Send a new key for a new request.",
  },
  "payload.too_large": {
    statuses: [413],
    title: "Request body too large",
    description:
      "The body exceeds the endpoint's limit; `detail` names the size, the limit and, where it is " +
      "configurable, the setting that raises it.",
  },
  "member_data.too_many_rows": {
    statuses: [400],
    title: "Too many member rows",
    description:
      "The upload has more member rows than the endpoint takes; `detail` names the count, the limit " +
      "and the setting that raises it (MATOOLKIT_MAX_MEMBER_ROWS). Nothing was written.",
  },
  "request.too_many_in_flight": {
    statuses: [429],
    title: "Too many heavy requests in flight",
    description:
      "The caller (or the server as a whole) already has as many heavy requests (CSV uploads, " +
      "plans, reports) running as it may; retry after the `Retry-After` seconds.",
  },
  "payload.unsupported": {
    statuses: [415],
    title: "Unsupported request encoding",
    description: "The body's charset or content encoding is not supported.",
  },
  "datasource.failed": {
    statuses: [502],
    title: "Data source failed",
    description: "The runbook's data source query failed (unreachable, rejected, timed out).",
  },
  "service.not_ready": {
    statuses: [503],
    title: "Not ready",
    description: "A dependency is not available yet (database, message bus); `notReady` names which.",
  },
  "tenant.check_unavailable": {
    statuses: [503],
    title: "Tenant check not available here",
    description:
      "The pre-flight check runs where the tenant's credential is, the worker: this API process runs " +
      "no worker (separate processes, e.g. Dapr mode). Run `npm run tenant:check` in the worker's " +
      "environment instead (docs/worker-and-tenant.md).",
  },
  "unexpected.exception": {
    statuses: [500],
    title: "Internal error",
    description: "An error the server did not anticipate; the server log holds the details.",
  },
  "auth.unauthenticated": {
    statuses: [401],
    title: "Authentication required",
    description: "No valid bearer token: missing, malformed, expired or not trusted.",
  },
  "auth.forbidden": {
    statuses: [403],
    title: "Role required",
    description:
      "The token is valid but the caller lacks the required app role or delegated scope: no role " +
      "of this API (nor an accepted scope) to read, not the role a write needs, or a delegated " +
      "token whose `scp` holds none of the scopes this API accepts.",
  },
  "auth.keys_unavailable": {
    statuses: [503],
    title: "Token keys unavailable",
    description: "The identity provider's signing keys could not be fetched to verify the token.",
  },
} as const satisfies Record<string, ProblemType>;

export type ProblemCode = keyof typeof problemTypes;
/** The statuses a code may be sent with. */
export type StatusOf<C extends ProblemCode> = (typeof problemTypes)[C]["statuses"][number];

export const problemCodes = Object.keys(problemTypes) as [ProblemCode, ...ProblemCode[]];

/**
 * Relative to the API's own origin, where `GET /problems/{code}` explains the type: a client
 * resolves it against the request URL (RFC 9457 3.1.1) and needs no domain we may not own.
 */
export function problemTypeUri(code: ProblemCode): string {
  return `/problems/${code}`;
}

export function isProblemCode(value: string): value is ProblemCode {
  return Object.hasOwn(problemTypes, value);
}

/** Every auth code has a problem type: a code added in auth-error.ts fails the typecheck here. */
type CoveredCode<C extends ProblemCode> = C;
export type AuthProblemCode = CoveredCode<AuthErrorCode>;

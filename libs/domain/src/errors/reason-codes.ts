/**
 * Stable, machine-readable failure reasons (FR-013): lowercase and dot-separated, persisted in
 * error columns and shown to operators next to a short sanitized message. Codes are part of the
 * contract with dashboards and alerts, so never rename one; add a new code instead.
 */
export const reasonCodes = {
  /** The worker function threw or returned a failure that has no more specific code. */
  workerError: "worker.error",
  /** No result came back from the worker within the allowed time. */
  workerTimeout: "worker.timeout",
  /** The worker stayed throttled (HTTP 429) after exhausting its in-runspace retries. */
  workerThrottled: "worker.throttled",
  /** The worker has no function with the requested name. */
  workerUnknownFunction: "worker.unknown_function",
  /** The worker rejected the step's parameters (missing, wrong type). */
  workerInvalidParameters: "worker.invalid_parameters",
  /** Microsoft Graph throttled the request (HTTP 429) and retries ran out. */
  graphThrottled: "graph.throttled",
  /** A Graph object the step needs does not exist (HTTP 404). */
  graphNotFound: "graph.not_found",
  /** The app identity lacks a Graph permission for the call (HTTP 403). */
  graphForbidden: "graph.forbidden",
  /** An Exchange Online cmdlet failed. */
  exchangeError: "exchange.error",
  /** A step parameter references a template variable that has no value for this member. */
  templateUnresolved: "template.unresolved",
  /** The runbook YAML failed validation. */
  runbookInvalid: "runbook.invalid",
  /** A member's data row failed validation against the runbook's data source. */
  memberDataInvalid: "member_data.invalid",
  /** A polling step did not complete within its poll timeout. */
  pollTimeout: "poll.timeout",
  /** The step was cancelled because its member failed an earlier step. */
  memberFailed: "member.failed",
  /** The step was cancelled because its member left the data source results. */
  memberRemoved: "member.removed",
  /** The step was cancelled because its batch was cancelled. */
  batchCancelled: "batch.cancelled",
  /** A runbook's data source query failed (unreachable, rejected, timed out); see runbooks.last_error. */
  dataSourceFailed: "datasource.failed",
  /** A bus message did not match its wire schema and cannot be processed. */
  messageInvalid: "message.invalid",
  /** The caller presented no valid credentials (HTTP 401). */
  authUnauthenticated: "auth.unauthenticated",
  /** The caller is authenticated but lacks the role for the action (HTTP 403). */
  authForbidden: "auth.forbidden",
  /** A request or other input failed validation. */
  validationInvalidInput: "validation.invalid_input",
  /** An error the code did not anticipate; the logs hold the details. */
  unexpectedException: "unexpected.exception",
} as const;

export type ReasonCode = (typeof reasonCodes)[keyof typeof reasonCodes];

const knownReasonCodes = new Set<string>(Object.values(reasonCodes));

/** For values read back from the database or a message: only known codes are trusted. */
export function isReasonCode(value: string): value is ReasonCode {
  return knownReasonCodes.has(value);
}

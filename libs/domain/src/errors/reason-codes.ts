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
  /**
   * The worker running the job died (its claim's lease ran out unrenewed) before it recorded an
   * outcome: the function may have been cut off anywhere, so the step fails and follows its
   * retry policy, unless the function is declared safe to repeat (then it simply runs again).
   */
  workerLost: "worker.lost",
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
  /** Graph refused the request as invalid (HTTP 400) for a reason with no code of its own. */
  graphBadRequest: "graph.bad_request",
  /** Graph reported a conflict with an existing object that the function could not treat as done. */
  graphConflict: "graph.conflict",
  /** Graph rejected the worker's token (HTTP 401): wrong tenant, expired or revoked credential. */
  graphUnauthorized: "graph.unauthorized",
  /** Graph could not be reached, or answered 5xx; transient. */
  graphUnavailable: "graph.unavailable",
  /**
   * Graph answered "not found" for an object the step had just read: the directory replica that
   * took the write has not seen it yet (created moments ago). Retryable: a later attempt succeeds.
   */
  graphReplicationLag: "graph.replication_lag",
  /**
   * Graph refused to change the membership of a mail-enabled security group or distribution list:
   * Exchange Online manages those (Add-/Remove-DistributionGroupMember). Permanent.
   */
  graphMailEnabledGroup: "graph.mail_enabled_group",
  /**
   * Graph refused to change attributes of a user synced from on-premises Active Directory: change
   * them there (the sync writes them to Entra ID). Permanent.
   */
  graphOnPremisesMastered: "graph.on_premises_mastered",
  /**
   * The tenant's external collaboration settings (authorizationPolicy allowInvitesFrom) refuse B2B
   * invitations from the worker's app. Permanent until an administrator changes the setting.
   */
  graphInvitationsNotAllowed: "graph.invitations_not_allowed",
  /** An Exchange Online cmdlet failed. */
  exchangeError: "exchange.error",
  /** Exchange Online throttled the request (HTTP 429) and retries ran out. */
  exchangeThrottled: "exchange.throttled",
  /** The Exchange object (recipient, mailbox, mail user, group) does not exist. */
  exchangeNotFound: "exchange.not_found",
  /** The app identity lacks an Exchange role or Exchange.ManageAsApp (HTTP 403). */
  exchangeForbidden: "exchange.forbidden",
  /** Exchange rejected the worker's token (HTTP 401). */
  exchangeUnauthorized: "exchange.unauthorized",
  /** A cmdlet refused its parameters (HTTP 400) for a reason with no code of its own. */
  exchangeBadRequest: "exchange.bad_request",
  /** Exchange reported a conflict (an address already used by another recipient). */
  exchangeConflict: "exchange.conflict",
  /** Exchange Online could not be reached, or answered 5xx; transient. */
  exchangeUnavailable: "exchange.unavailable",
  /**
   * The target of a cross-tenant mailbox move is a mailbox, or a mail user that once had one
   * (Get-User PreviousRecipientTypeDetails): the move needs a MailUser that never had a mailbox.
   * Permanent: clean the object up first (Set-User -PermanentlyClearPreviousMailboxInfo).
   */
  exchangeTargetHadMailbox: "exchange.target_had_mailbox",
  /**
   * The target mail user holds an Exchange Online license before its ExchangeGuid is stamped: a
   * license first provisions a new mailbox. Permanent: remove the license, stamp, then license.
   */
  exchangeLicensedBeforeGuids: "exchange.licensed_before_guids",
  /**
   * Inviting an internal user to B2B needs its `mail` set to the external address first. Permanent
   * until the mail attribute is corrected.
   */
  entraInvitationMailMismatch: "entra.invitation_mail_mismatch",
  /**
   * Entra refuses to invite a user synced from on-premises (onPremisesUserPrincipalName set) to B2B.
   * Permanent until the sync rule stops writing the attribute.
   */
  entraInvitationSyncedUser: "entra.invitation_synced_user",
  /**
   * The user's B2B invitation is still pending (not redeemed): it does not authenticate externally
   * yet, so it cannot be converted to internal. Permanent for this run; convert after redemption.
   */
  entraInvitationPending: "entra.invitation_pending",
  /**
   * The user authenticates with this tenant and was never converted (no external identity, no
   * externalUserConvertedOn): there is nothing to convert. Permanent.
   */
  entraNotExternallyAuthenticated: "entra.not_externally_authenticated",
  /** The worker has no target tenant configured, so a tenant function cannot run. */
  tenantNotConfigured: "tenant.not_configured",
  /** No token could be obtained for the target tenant (certificate, secret or managed identity refused). */
  tenantAuthFailed: "tenant.auth_failed",
  /** A Test-* validator found attributes that do not hold the expected values. */
  checkMismatch: "check.mismatch",
  /** A Test-* validator found a group membership that is not as expected. */
  checkMembership: "check.membership",
  /** A step parameter references a template variable that has no value for this member. */
  templateUnresolved: "template.unresolved",
  /**
   * A step's `when:` condition could not be decided for this member: a value it orders against a
   * number (`{{Quota}} > 5`) is not a number. The step fails rather than guess a path.
   */
  conditionInvalid: "condition.invalid",
  /**
   * A `for_each:` step has more values for this member than a step may expand to (1,000): the
   * member fails rather than flood the workers; split the list or raise it with the maintainers.
   */
  forEachTooMany: "for_each.too_many",
  /** A `for_each:` step's list is not a list for this member (an output that returned text, a map). */
  forEachNotAList: "for_each.not_a_list",
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
  /**
   * An operator rejected a phase awaiting approval (`approval: required`), or its approval timed out
   * with `approval_timeout_outcome: reject`: the phase failed without sending anything.
   */
  phaseRejected: "phase.rejected",
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
  /** No Microsoft Entra token could be had for PostgreSQL (DATABASE_AUTH=entra). */
  databaseAuthFailed: "database.auth_failed",
  /** The database schema is behind this release's migrations: run `matoolkit migrate` first. */
  databaseSchemaOutdated: "database.schema_outdated",
  /** An error the code did not anticipate; the logs hold the details. */
  unexpectedException: "unexpected.exception",
} as const;

export type ReasonCode = (typeof reasonCodes)[keyof typeof reasonCodes];

const knownReasonCodes = new Set<string>(Object.values(reasonCodes));

/** For values read back from the database or a message: only known codes are trusted. */
export function isReasonCode(value: string): value is ReasonCode {
  return knownReasonCodes.has(value);
}

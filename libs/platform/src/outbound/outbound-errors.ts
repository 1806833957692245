/**
 * Why an outbound request was not made or did not get an answer. `message` is safe for the
 * person who configured the URL (it names the host and address, never a path or query, which
 * may carry a token); the delivery log shows none of it (one generic `webhook.unreachable`),
 * only the server's log line does.
 */
export type OutboundFailureKind =
  /** The URL is malformed or of a kind never sent to (scheme, credentials). */
  | "invalid_url"
  /** The host resolved to an address the policy refuses (loopback, private, metadata…). */
  | "refused_address"
  /** The host name did not resolve. */
  | "unresolved"
  /** Resolved and allowed, but the connection or the exchange failed (refused, reset, TLS). */
  | "connect_failed"
  /** No answer within the deadline. */
  | "timeout";

export class OutboundRequestError extends Error {
  override readonly name = "OutboundRequestError";
  constructor(
    readonly kind: OutboundFailureKind,
    message: string,
    /** A system error code (ECONNREFUSED, ENOTFOUND…) for the server log; never a URL. */
    readonly code?: string,
  ) {
    super(message);
  }
}

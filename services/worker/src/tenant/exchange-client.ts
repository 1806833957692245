/**
 * The port the Exchange functions (and custom functions) use to run Exchange Online cmdlets.
 * Today's adapter (`invoke-command-exchange-client.ts`) posts to the admin API `InvokeCommand`
 * endpoint that the ExchangeOnlineManagement v3 module itself calls; a later one may use the
 * newer Exchange admin API endpoints without any function changing.
 *
 * Errors: thrown as MatoolkitError with `exchange.*` reason codes (`exchange.throttled` as
 * RetryAfterError when Retry-After was sent, `exchange.not_found` for
 * ManagementObjectNotFoundException, `exchange.forbidden`, `exchange.unauthorized`,
 * `exchange.bad_request`, `exchange.conflict`, `exchange.unavailable`).
 */
export interface ExchangeCommandResult {
  /** The cmdlet's output objects (`value`), all pages followed. */
  readonly value: readonly Record<string, unknown>[];
  /** `@adminapi.warnings`, e.g. "completed successfully but no settings … have been modified". */
  readonly warnings: readonly string[];
}

export interface ExchangeClient {
  invoke(
    cmdlet: string,
    parameters: Readonly<Record<string, unknown>>,
    signal: AbortSignal,
  ): Promise<ExchangeCommandResult>;
}

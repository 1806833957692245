/**
 * The port the Entra functions (and custom functions) use to reach Microsoft Graph. The adapter
 * (`msgraph-graph-client.ts`) is built on `@microsoft/microsoft-graph-client`; a function never
 * sees HTTP, tokens or the SDK, only this request shape and mapped errors.
 *
 * Errors: every failure is thrown as a MatoolkitError with a stable reason code
 * (`graph.throttled` as RetryAfterError when the service sent Retry-After, `graph.not_found`,
 * `graph.forbidden`, `graph.unauthorized`, `graph.bad_request`, `graph.conflict`,
 * `graph.unavailable`), and `graphErrorOf(error)` gives the Graph error code and status for
 * functions that treat a specific conflict as "already done".
 */
export type GraphMethod = "GET" | "POST" | "PATCH" | "DELETE";

export interface GraphRequest {
  readonly method: GraphMethod;
  /** Path below the version segment, e.g. `/users/{id}`; ids are URL-encoded by the caller. */
  readonly path: string;
  /** Defaults to `v1.0`; `beta` only where an operation exists nowhere else. */
  readonly version?: "v1.0" | "beta";
  /** OData query options such as `$select`, passed as given (values are encoded by the adapter). */
  readonly query?: Readonly<Record<string, string>>;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface GraphClient {
  /**
   * The Graph service root of the tenant's cloud, e.g. `https://graph.microsoft.us`, for
   * `@odata.id` references (see `directoryObjectReference`). It is the cloud's, not the URL
   * requests go to, which an override may point elsewhere (the simulated tenant, a proxy).
   */
  readonly serviceRoot: string;
  /** Resolves with the parsed JSON body (undefined for 204); throws mapped errors (see above). */
  request<T = unknown>(request: GraphRequest, signal: AbortSignal): Promise<T>;
}

import type { TokenCredential } from "@azure/identity";
import { Client, GraphError, HTTPMessageHandler, ResponseType } from "@microsoft/microsoft-graph-client";
import type { Context, Middleware, MiddlewareOptions } from "@microsoft/microsoft-graph-client";
import { MatoolkitError, NonRetriableError, reasonCodes, withDeadline } from "@matoolkit/domain";
import type { GraphClient, GraphRequest } from "./graph-client.ts";
import { azureCloud, defaultAzureCloud, type AzureCloudName } from "./azure-clouds.ts";
import { mapGraphError, operationName } from "./graph-error-mapping.ts";

export { graphErrorOf, type GraphErrorInfo } from "./graph-error-mapping.ts";

export interface MsGraphClientOptions {
  /** App-only credential of the target tenant; @azure/identity caches and renews its tokens. */
  readonly credential: TokenCredential;
  /** Where requests go; defaults to the cloud's Graph root (the simulated tenant in tests). */
  readonly baseUrl?: string;
  /** The tenant's cloud (default AzureCloud): its token scope and `@odata.id` host. */
  readonly cloud?: AzureCloudName;
  /**
   * One request's limit (default 100 s, the Graph SDKs' own): a connection that hangs becomes a
   * transient `graph.unavailable` instead of holding the job until its timeout.
   */
  readonly requestTimeoutMs?: number;
}

/**
 * The GraphClient port on `@microsoft/microsoft-graph-client` v3, with a middleware chain of our
 * own: [bearer token for the base URL's origin] → [HTTPMessageHandler (fetch)].
 *
 * - No RetryHandler: the worker retries throttled and unavailable calls itself around the whole
 *   function, honouring Retry-After (throttle-retry.ts); the SDK's own retries would multiply them.
 * - No SDK AuthenticationHandler: it attaches the token only when `isGraphURL(url)` or
 *   `isCustomHost(url, customHosts)`, and both only recognise `https://` URLs (GraphRequestUtil
 *   `isValidEndpoint` in v3.0.7), so a `customHosts` entry cannot make an `http://` simulator work.
 *   Ours attaches it to exactly the configured origin (scheme, host and port), and never to any
 *   other host a URL might point at.
 * - Responses are read raw so errors keep their status and headers (Retry-After) whatever the body.
 */
export function createMsGraphClient(options: MsGraphClientOptions): GraphClient {
  const cloud = azureCloud(options.cloud ?? defaultAzureCloud);
  const baseUrl = (options.baseUrl ?? cloud.graphBaseUrl).replace(/\/+$/, "");
  const origin = new URL(baseUrl).origin;
  // The scope is the cloud's whatever the base URL: a token for graph.microsoft.com is refused by
  // graph.microsoft.us (https://learn.microsoft.com/graph/sdks/national-clouds, "Permission scopes").
  const authentication = new BearerTokenMiddleware(options.credential, origin, cloud.graphScope);
  authentication.setNext(new HTTPMessageHandler());
  const client = Client.initWithMiddleware({ baseUrl, middleware: authentication });
  const requestTimeoutMs = options.requestTimeoutMs ?? 100_000;

  return {
    serviceRoot: cloud.graphBaseUrl,
    request<T>(request: GraphRequest, signal: AbortSignal): Promise<T> {
      // One deadline for the whole exchange, answer and body: a peer that accepts the connection
      // and never answers (or stops mid-body) is given up on as transient graph.unavailable.
      return withDeadline(signal, requestTimeoutMs, (requestSignal) =>
        requestOnce<T>(request, signal, requestSignal),
      );
    },
  };

  async function requestOnce<T>(
    request: GraphRequest,
    signal: AbortSignal,
    requestSignal: AbortSignal,
  ): Promise<T> {
    const version = request.version ?? "v1.0";
    const operation = operationName(request.method, version, request.path);
    const scope = new RequestScope(signal);
    let response: Response;
    try {
      let builder = client
        .api(request.path)
        .version(version)
        .option("signal", requestSignal)
        .middlewareOptions([scope])
        .responseType(ResponseType.RAW);
      if (request.query !== undefined) builder = builder.query(encodeQuery(request.query));
      if (request.headers !== undefined) builder = builder.headers({ ...request.headers });
      response = (await send(builder, request)) as Response;
    } catch (error) {
      throw failure(error, scope, operation, signal);
    }
    if (response.ok) return (await readJson(response, signal)) as T;
    throw mapGraphError(await errorFromResponse(response), operation);
  }
}

function send(builder: ReturnType<Client["api"]>, request: GraphRequest): Promise<unknown> {
  switch (request.method) {
    case "GET":
      return builder.get();
    case "POST":
      return builder.post(request.body ?? {});
    case "PATCH":
      return builder.patch(request.body ?? {});
    case "DELETE":
      return builder.delete();
    default: {
      const unreachable: never = request.method;
      throw new Error(`Unsupported method ${String(unreachable)}`);
    }
  }
}

/** The port's contract: query values are given raw and encoded here (the SDK does not). */
function encodeQuery(query: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(query).map(([key, value]) => [key, encodeURIComponent(value)]));
}

async function readJson(response: Response, signal: AbortSignal): Promise<unknown> {
  if (response.status === 204) return undefined;
  try {
    const text = await response.text();
    return text.trim() === "" ? undefined : JSON.parse(text);
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    throw new MatoolkitError(reasonCodes.graphUnavailable, "Graph answered with a body that is not JSON", {
      cause: error,
    });
  }
}

/** What the SDK itself would build from an error response, but with the headers always kept. */
async function errorFromResponse(response: Response): Promise<GraphError> {
  let body: unknown;
  try {
    body = JSON.parse(await response.text());
  } catch {
    body = undefined;
  }
  const inner = (body as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
  const error = new GraphError(response.status, typeof inner?.message === "string" ? inner.message : "");
  error.code = typeof inner?.code === "string" ? inner.code : null;
  error.body = inner === undefined ? null : JSON.stringify(inner);
  error.headers = response.headers;
  return error;
}

function failure(error: unknown, scope: RequestScope, operation: string, signal: AbortSignal): unknown {
  // Job timeout or worker stop: the caller reports the abort reason, not a Graph failure.
  if (signal.aborted) return signal.reason;
  if (scope.tokenFailure !== undefined) return tokenFailure(scope.tokenFailure);
  if (error instanceof GraphError) return mapGraphError(error, operation);
  return new MatoolkitError(reasonCodes.graphUnavailable, `Graph ${operation} failed before a response`, {
    cause: error,
  });
}

/**
 * @azure/identity throws AuthenticationError (with the token endpoint's status) when Entra ID
 * refused the credential, which retrying will not fix; anything else (endpoint unreachable,
 * managed identity not ready yet) may pass.
 */
function tokenFailure(error: unknown): MatoolkitError {
  // credentials.ts already says which tenant and credential failed, and whether it will recover.
  if (error instanceof MatoolkitError) return error;
  const status = (error as { statusCode?: unknown }).statusCode;
  const refused = typeof status === "number" && status >= 400 && status < 500;
  const message = `No Graph token for the target tenant (${(error as Error).name ?? "error"})`;
  return refused
    ? new NonRetriableError(reasonCodes.tenantAuthFailed, message, { cause: error })
    : new MatoolkitError(reasonCodes.tenantAuthFailed, message, { cause: error });
}

/**
 * Per-request state handed to the middleware (the SDK keys middleware options by class): the
 * job's AbortSignal for the token request, and the token failure, which the SDK would otherwise
 * flatten into a GraphError with only the error's name.
 */
class RequestScope implements MiddlewareOptions {
  tokenFailure: unknown;
  constructor(readonly signal: AbortSignal) {}
}

/** Adds `Authorization: Bearer` to requests for the configured origin only (see above). */
class BearerTokenMiddleware implements Middleware {
  #next: Middleware | undefined;

  constructor(
    private readonly credential: TokenCredential,
    private readonly origin: string,
    private readonly tokenScope: string,
  ) {}

  setNext(next: Middleware): void {
    this.#next = next;
  }

  async execute(context: Context): Promise<void> {
    const url = typeof context.request === "string" ? context.request : context.request.url;
    const headers = (context.options ??= {}).headers as Record<string, string> | undefined;
    if (new URL(url).origin === this.origin) {
      const scope = context.middlewareControl?.getMiddlewareOptions(RequestScope) as RequestScope | undefined;
      let token: string;
      try {
        const accessToken = await this.credential.getToken(this.tokenScope, {
          abortSignal: scope?.signal,
        });
        if (accessToken === null) throw new Error("The credential returned no token");
        token = accessToken.token;
      } catch (error) {
        if (scope !== undefined) scope.tokenFailure = error;
        throw error;
      }
      context.options.headers = { ...headers, Authorization: `Bearer ${token}` };
    } else if (headers !== undefined) {
      delete headers.Authorization;
    }
    if (this.#next === undefined) throw new Error("BearerTokenMiddleware has no next middleware");
    await this.#next.execute(context);
  }
}

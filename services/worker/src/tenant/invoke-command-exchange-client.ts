import type { TokenCredential } from "@azure/identity";
import { MatoolkitError, NonRetriableError, reasonCodes, withDeadline } from "@matoolkit/domain";
import type { ExchangeClient, ExchangeCommandResult } from "./exchange-client.ts";
import { azureCloud, defaultAzureCloud, type AzureCloudName } from "./azure-clouds.ts";
import { exchangeErrorFromResponse } from "./exchange-error-mapping.ts";

export interface InvokeCommandExchangeClientOptions {
  /** App-only credential of the target tenant; @azure/identity caches and refreshes its tokens. */
  readonly credential: TokenCredential;
  /** The tenant's id (GUID) or initial domain, as the admin API path and anchor mailbox take it. */
  readonly tenantId: string;
  /** Where requests go; defaults to the cloud's admin API root (the simulated tenant in tests). */
  readonly baseUrl?: string;
  /** The tenant's cloud (default AzureCloud): the token resource, and the default base URL. */
  readonly cloud?: AzureCloudName;
  readonly fetch?: typeof fetch;
  /**
   * One request's limit (default 100 s, as the Graph adapter): a connection that hangs becomes a
   * transient `exchange.unavailable` instead of holding the job until its timeout.
   */
  readonly requestTimeoutMs?: number;
}

/** Pages are followed until the service stops sending nextLink; this bounds a misbehaving one. */
const maxPages = 10_000;

/**
 * The ExchangeClient adapter for the Exchange Online admin API: `POST
 * {baseUrl}/adminapi/beta/{tenantId}/InvokeCommand` with `{CmdletInput: {CmdletName, Parameters}}`,
 * the endpoint the ExchangeOnlineManagement v3 module itself calls, so no PowerShell is needed.
 * The token (app permission Exchange.ManageAsApp) is never logged or put in an error.
 */
export function createInvokeCommandExchangeClient(
  options: InvokeCommandExchangeClientOptions,
): ExchangeClient {
  const cloud = azureCloud(options.cloud ?? defaultAzureCloud);
  const baseUrl = (options.baseUrl ?? cloud.exchangeBaseUrl).replace(/\/+$/, "");
  const requestTimeoutMs = options.requestTimeoutMs ?? 100_000;
  // The cloud's Office 365 Exchange Online resource whatever the base URL (see azure-clouds.ts).
  const resource = cloud.exchangeResource;
  const doFetch = options.fetch ?? fetch;
  const endpoint = `${baseUrl}/adminapi/beta/${encodeURIComponent(options.tenantId)}/InvokeCommand`;
  const origin = new URL(endpoint).origin;
  // App-only calls are routed through the tenant's system mailbox, as the EXO v3 module does.
  const anchor = `APP:SystemMailbox{bb558c35-97f1-4cb9-8ff7-d53741dc928c}@${options.tenantId}`;

  const token = async (cmdlet: string, signal: AbortSignal): Promise<string> => {
    try {
      const accessToken = await options.credential.getToken(`${resource}/.default`, { abortSignal: signal });
      if (accessToken === null) throw new Error("no token");
      return accessToken.token;
    } catch (error) {
      if (signal.aborted) throw signal.reason ?? error;
      // credentials.ts already says which tenant and credential failed, and whether it will recover.
      if (error instanceof MatoolkitError) throw error;
      const name = error instanceof Error ? error.name : "Error";
      // A refused certificate or secret stays refused; an unreachable login endpoint may recover.
      const permanent = name === "AuthenticationError" || name === "CredentialUnavailableError";
      const message = `${cmdlet}: no token for Exchange Online (${name})`;
      throw permanent
        ? new NonRetriableError(reasonCodes.tenantAuthFailed, message, { cause: error })
        : new MatoolkitError(reasonCodes.tenantAuthFailed, message, { cause: error });
    }
  };

  const post = async (url: string, cmdlet: string, body: string, signal: AbortSignal): Promise<unknown> => {
    const headers = {
      Authorization: `Bearer ${await token(cmdlet, signal)}`,
      "Content-Type": "application/json",
      Accept: "application/json",
      "X-AnchorMailbox": anchor,
      Prefer: "odata.maxpagesize=1000",
    };
    return withDeadline(signal, requestTimeoutMs, (requestSignal) =>
      postOnce(url, cmdlet, headers, body, signal, requestSignal),
    );
  };

  const postOnce = async (
    url: string,
    cmdlet: string,
    headers: Record<string, string>,
    body: string,
    signal: AbortSignal,
    requestSignal: AbortSignal,
  ): Promise<unknown> => {
    let response: Response;
    try {
      response = await doFetch(url, { method: "POST", headers, body, signal: requestSignal });
    } catch (error) {
      if (signal.aborted) throw signal.reason ?? error;
      if (requestSignal.aborted) {
        throw new MatoolkitError(
          reasonCodes.exchangeUnavailable,
          `${cmdlet}: no answer from Exchange Online within ${requestTimeoutMs / 1000}s`,
        );
      }
      const code = networkCode(error);
      throw new MatoolkitError(
        reasonCodes.exchangeUnavailable,
        `${cmdlet}: Exchange Online unreachable (${code})`,
      );
    }
    const parsed = await readJson(response);
    if (signal.aborted) throw signal.reason;
    if (!response.ok) {
      // A body that is not JSON is passed on as text: the concurrency refusal is plain text.
      const body = parsed === undefined ? textOf(response) : parsed;
      throw exchangeErrorFromResponse(cmdlet, response.status, response.headers.get("retry-after"), body);
    }
    if (parsed === undefined || typeof parsed !== "object" || parsed === null) {
      throw new MatoolkitError(
        reasonCodes.exchangeUnavailable,
        `${cmdlet}: unreadable response (HTTP ${response.status})`,
      );
    }
    return parsed;
  };

  return {
    invoke: async (cmdlet, parameters, signal): Promise<ExchangeCommandResult> => {
      const body = JSON.stringify({ CmdletInput: { CmdletName: cmdlet, Parameters: parameters } });
      const value: Record<string, unknown>[] = [];
      const warnings: string[] = [];
      let url: string | undefined = endpoint;
      for (let page = 0; url !== undefined; page++) {
        if (page >= maxPages)
          throw new NonRetriableError(reasonCodes.exchangeError, `${cmdlet}: too many result pages`);
        const result = (await post(url, cmdlet, body, signal)) as Record<string, unknown>;
        if (Array.isArray(result.value)) value.push(...(result.value as Record<string, unknown>[]));
        const pageWarnings = result["@adminapi.warnings"];
        if (Array.isArray(pageWarnings)) warnings.push(...pageWarnings.map(String));
        url = nextLinkOf(result, url, origin, cmdlet);
      }
      return { value, warnings };
    },
  };
}

/** The next page's URL; only on the service's own origin, since the bearer token goes with it. */
function nextLinkOf(
  result: Record<string, unknown>,
  current: string,
  origin: string,
  cmdlet: string,
): string | undefined {
  const next = result["@odata.nextLink"];
  if (typeof next !== "string" || next === "") return undefined;
  const url = new URL(next, current);
  if (url.origin !== origin) {
    throw new NonRetriableError(
      reasonCodes.exchangeError,
      `${cmdlet}: nextLink points to another host; not followed`,
    );
  }
  return url.toString();
}

/** The body read by readJson, kept for error answers that are not JSON (capped: it is only matched). */
const bodyTexts = new WeakMap<Response, string>();

function textOf(response: Response): string {
  return (bodyTexts.get(response) ?? "").slice(0, 2_000);
}

async function readJson(response: Response): Promise<unknown> {
  const text = await response.text().catch(() => "");
  bodyTexts.set(response, text);
  if (text === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** `ECONNREFUSED`, `ENOTFOUND`…: undici puts the system error in `cause`. */
function networkCode(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause;
  if (typeof cause?.code === "string" && /^[A-Z_]{2,40}$/.test(cause.code)) return cause.code;
  return error instanceof Error ? error.name : "network error";
}

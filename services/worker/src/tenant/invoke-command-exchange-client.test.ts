import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { TokenCredential } from "@azure/identity";
import { afterEach, describe, expect, it } from "vitest";
import { MatoolkitError, NonRetriableError, RetryAfterError, reasonCodes } from "@matoolkit/domain";
import { exchangeErrorBody } from "@matoolkit/simulated-tenant";
import { exchangeErrorOf } from "./exchange-error-mapping.ts";
import { createInvokeCommandExchangeClient } from "./invoke-command-exchange-client.ts";

interface Recorded {
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: unknown;
}
interface Reply {
  readonly status: number;
  readonly body: unknown;
  readonly headers?: Record<string, string>;
}

/** A stand-in admin API answering scripted replies in order, recording every request. */
async function stubService(replies: Reply[]): Promise<{ url: string; requests: Recorded[]; server: Server }> {
  const requests: Recorded[] = [];
  const server = createServer((request, response) => {
    let text = "";
    request.on("data", (chunk: Buffer) => (text += chunk.toString()));
    request.on("end", () => {
      requests.push({ url: request.url ?? "", headers: request.headers, body: JSON.parse(text) });
      const reply = replies.shift() ?? { status: 500, body: {} };
      response.writeHead(reply.status, { "Content-Type": "application/json", ...reply.headers });
      response.end(JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, server };
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

const tenantId = "5f1c2d3e-0a1b-4c2d-8e3f-9a0b1c2d3e4f";
const scopes: unknown[] = [];
const credential: TokenCredential = {
  getToken: async (scope) => {
    scopes.push(scope);
    return { token: "secret-token-value", expiresOnTimestamp: Date.now() + 60_000 };
  },
};
const signal = new AbortController().signal;

function client(baseUrl: string) {
  return createInvokeCommandExchangeClient({ credential, tenantId, baseUrl });
}

async function failureOf(promise: Promise<unknown>): Promise<MatoolkitError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!(error instanceof MatoolkitError)) throw new Error(`expected a MatoolkitError, got ${String(error)}`);
  return error;
}

describe("InvokeCommand Exchange client", () => {
  it("posts the cmdlet with the app-only headers and token, follows nextLink and merges warnings", async () => {
    const firstPage: Record<string, unknown> = { value: [{ Name: "a" }], "@adminapi.warnings": ["first"] };
    const paged = await stubService([
      { status: 200, body: firstPage },
      { status: 200, body: { value: [{ Name: "b" }], "@adminapi.warnings": ["second"] } },
    ]);
    // Replies are read when a request arrives, so the link can name the port picked at start.
    firstPage["@odata.nextLink"] = `${paged.url}/adminapi/beta/${tenantId}/InvokeCommand?$skiptoken=1`;

    const result = await client(paged.url).invoke("Get-Recipient", { ResultSize: "Unlimited" }, signal);

    expect(result).toEqual({ value: [{ Name: "a" }, { Name: "b" }], warnings: ["first", "second"] });
    expect(paged.requests.map((request) => request.url)).toEqual([
      `/adminapi/beta/${tenantId}/InvokeCommand`,
      `/adminapi/beta/${tenantId}/InvokeCommand?$skiptoken=1`,
    ]);
    for (const request of paged.requests) {
      expect(request.body).toEqual({
        CmdletInput: { CmdletName: "Get-Recipient", Parameters: { ResultSize: "Unlimited" } },
      });
      expect(request.headers).toMatchObject({
        authorization: "Bearer secret-token-value",
        "content-type": "application/json",
        "x-anchormailbox": `APP:SystemMailbox{bb558c35-97f1-4cb9-8ff7-d53741dc928c}@${tenantId}`,
        prefer: "odata.maxpagesize=1000",
      });
    }
    expect(scopes.at(-1)).toBe("https://outlook.office365.com/.default");
  });

  it("refuses to send the token to a nextLink on another host", async () => {
    const service = await stubService([
      { status: 200, body: { value: [], "@odata.nextLink": "https://elsewhere.example/next" } },
    ]);
    const error = await failureOf(client(service.url).invoke("Get-Recipient", {}, signal));
    expect(error).toBeInstanceOf(NonRetriableError);
    expect(service.requests).toHaveLength(1);
  });

  const exchangeError = (type: string, text: string, code = "BadRequest") =>
    exchangeErrorBody(type, text, code);
  const cases: readonly (readonly [string, Reply, string, "permanent" | "transient" | "retryAfter"])[] = [
    [
      "object not found",
      {
        status: 404,
        body: exchangeError(
          "Microsoft.Exchange.Configuration.Tasks.ManagementObjectNotFoundException",
          "object 'jo@x.example' not found",
          "NotFound",
        ),
      },
      reasonCodes.exchangeNotFound,
      "permanent",
    ],
    [
      "proxy address taken",
      {
        status: 400,
        body: exchangeError(
          "Microsoft.Exchange.Data.ProxyAddressExistsException",
          'The proxy address "smtp:jo@x.example" is already being used by "jo"',
        ),
      },
      reasonCodes.exchangeConflict,
      "permanent",
    ],
    [
      "conflict told only by the text",
      {
        status: 400,
        body: exchangeError(
          "Microsoft.Exchange.Configuration.Tasks.RecipientTaskException",
          "The proxy address is already being used by the proxy addresses of jo",
        ),
      },
      reasonCodes.exchangeConflict,
      "permanent",
    ],
    [
      "parameter binding",
      {
        status: 400,
        body: exchangeError(
          "System.Management.Automation.ParameterBindingException",
          "A parameter cannot be found that matches parameter name 'X'.",
        ),
      },
      reasonCodes.exchangeBadRequest,
      "permanent",
    ],
    [
      "429 with Retry-After",
      { status: 429, body: {}, headers: { "Retry-After": "7" } },
      reasonCodes.exchangeThrottled,
      "retryAfter",
    ],
    ["429 without Retry-After", { status: 429, body: {} }, reasonCodes.exchangeThrottled, "transient"],
    [
      "503 with Retry-After",
      { status: 503, body: {}, headers: { "Retry-After": "3" } },
      reasonCodes.exchangeThrottled,
      "retryAfter",
    ],
    ["503 without Retry-After", { status: 503, body: {} }, reasonCodes.exchangeUnavailable, "transient"],
    [
      "500",
      { status: 500, body: exchangeError("System.Exception", "boom", "InternalServerError") },
      reasonCodes.exchangeUnavailable,
      "transient",
    ],
    [
      "401",
      { status: 401, body: exchangeError("System.UnauthorizedAccessException", "no", "Unauthorized") },
      reasonCodes.exchangeUnauthorized,
      "permanent",
    ],
    ["403", { status: 403, body: {} }, reasonCodes.exchangeForbidden, "permanent"],
    ["another 4xx", { status: 405, body: "not json at all" }, reasonCodes.exchangeBadRequest, "permanent"],
  ];

  it.each(cases)(
    "maps %s to its reason code and retry policy, naming cmdlet and type but no identity",
    async (_what, reply, reason, policy) => {
      const service = await stubService([reply]);
      const error = await failureOf(
        client(service.url).invoke("Set-MailUser", { Identity: "jo@x.example" }, signal),
      );

      expect(error.reason).toBe(reason);
      if (policy === "permanent") expect(error).toBeInstanceOf(NonRetriableError);
      if (policy === "transient")
        expect([error.retriable, error instanceof RetryAfterError]).toEqual([true, false]);
      if (policy === "retryAfter") expect(error).toBeInstanceOf(RetryAfterError);
      expect(error.message).toMatch(/^Set-MailUser failed \(HTTP \d{3}/);
      expect(error.message).not.toMatch(/jo|x\.example|secret-token/);
      expect(exchangeErrorOf(error)?.status).toBe(reply.status);
    },
  );

  describe("where the exception type is read", () => {
    const notFound = "Microsoft.Exchange.Configuration.Tasks.ManagementObjectNotFoundException";
    const typed = (type: string) =>
      `Ex6F9304|${type}|The operation couldn't be performed because object 'jo@x.example' couldn't be found on 'DC1.PROD.OUTLOOK.COM'.`;
    const odataLayer = "Microsoft.Exchange.Admin.OData.Core.ODataServiceException";
    const bodies: readonly (readonly [string, unknown, string])[] = [
      [
        // The service's own shape (Microsoft365DSC/Microsoft365DSC issue #2998): the string only in details.
        "error.details[].message, error.message generic",
        {
          error: {
            code: "NotFound",
            message: "Error executing cmdlet",
            details: [{ code: "Context", target: "", message: typed(notFound) }],
            innererror: { message: "Error executing cmdlet", type: odataLayer, stacktrace: "" },
          },
        },
        notFound,
      ],
      [
        "error.details[] first, even when error.message holds another typed string",
        {
          error: {
            message: typed("System.Management.Automation.ParameterBindingException"),
            details: [{ code: "Client", message: typed(notFound) }],
          },
        },
        notFound,
      ],
      ["error.message when details has none", { error: { message: typed(notFound), details: [] } }, notFound],
      [
        "innererror.internalexception.message last",
        {
          error: {
            message: "Error executing cmdlet",
            innererror: { type: odataLayer, internalexception: { message: typed(notFound) } },
          },
        },
        notFound,
      ],
      [
        "innererror.internalexception.type when nothing carries the string",
        {
          error: {
            message: "Error executing cmdlet",
            innererror: { type: odataLayer, internalexception: { message: "x", type: notFound } },
          },
        },
        notFound,
      ],
    ];

    it.each(bodies)("%s", async (_where, body, type) => {
      const service = await stubService([{ status: 404, body }]);
      const error = await failureOf(client(service.url).invoke("Get-Recipient", { Identity: "jo" }, signal));
      expect(exchangeErrorOf(error)).toMatchObject({ exceptionType: type });
      expect(error.reason).toBe(reasonCodes.exchangeNotFound);
      expect(error.message).toBe(`Get-Recipient failed (HTTP 404, ${type})`);
    });

    it("keeps the OData layer's own type (innererror.type) out of the classification", async () => {
      const service = await stubService([
        {
          status: 400,
          body: { error: { message: "Error executing cmdlet", innererror: { type: odataLayer } } },
        },
      ]);
      const error = await failureOf(client(service.url).invoke("Set-MailUser", {}, signal));
      expect(exchangeErrorOf(error)?.exceptionType).toBeUndefined();
      expect(error.reason).toBe(reasonCodes.exchangeBadRequest);
    });
  });

  it("passes the service's Retry-After seconds on", async () => {
    const service = await stubService([{ status: 429, body: {}, headers: { "Retry-After": "7" } }]);
    const error = await failureOf(client(service.url).invoke("Get-Mailbox", {}, signal));
    expect((error as RetryAfterError).retryAfterSeconds).toBe(7);
  });

  it("reports an unreachable service as transient exchange.unavailable", async () => {
    const service = await stubService([]);
    const closedUrl = service.url;
    await new Promise((resolve) => service.server.close(resolve));
    const error = await failureOf(client(closedUrl).invoke("Get-Mailbox", {}, signal));
    expect(error.reason).toBe(reasonCodes.exchangeUnavailable);
    expect(error.retriable).toBe(true);
    expect(error.message).toContain("ECONNREFUSED");
  });

  it("gives up on a service that never answers after the request timeout, as transient", async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    servers.push(silent);
    const exchange = createInvokeCommandExchangeClient({
      credential,
      tenantId,
      baseUrl: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`,
      requestTimeoutMs: 200,
    });
    const error = await failureOf(exchange.invoke("Get-Mailbox", {}, signal));
    expect(error.reason).toBe(reasonCodes.exchangeUnavailable);
    expect(error.retriable).toBe(true);
    expect(error.message).toBe("Get-Mailbox: no answer from Exchange Online within 0.2s");
  });

  it("keeps the credential's own tenant.auth_failed error (which tenant, which credential)", async () => {
    const own = new NonRetriableError(reasonCodes.tenantAuthFailed, "tenant T (certificate): AADSTS700027");
    const exchange = createInvokeCommandExchangeClient({
      credential: { getToken: async () => Promise.reject(own) },
      tenantId,
      baseUrl: "http://127.0.0.1:9",
    });
    expect(await failureOf(exchange.invoke("Get-Mailbox", {}, signal))).toBe(own);
  });

  it("fails with tenant.auth_failed when the credential refuses, without calling the service", async () => {
    const service = await stubService([]);
    const refusing: TokenCredential = {
      getToken: async () => {
        throw Object.assign(new Error("AADSTS7000215: Invalid client secret"), {
          name: "AuthenticationError",
        });
      },
    };
    const exchange = createInvokeCommandExchangeClient({
      credential: refusing,
      tenantId,
      baseUrl: service.url,
    });
    const error = await failureOf(exchange.invoke("Get-Mailbox", {}, signal));
    expect(error).toBeInstanceOf(NonRetriableError);
    expect(error.reason).toBe(reasonCodes.tenantAuthFailed);
    expect(error.message).not.toContain("AADSTS");
    expect(service.requests).toEqual([]);
  });

  it("stops with the abort reason when the job is aborted", async () => {
    const controller = new AbortController();
    const reason = new Error("job timed out");
    controller.abort(reason);
    const service = await stubService([{ status: 200, body: { value: [] } }]);
    await expect(client(service.url).invoke("Get-Mailbox", {}, controller.signal)).rejects.toBe(reason);
  });
});

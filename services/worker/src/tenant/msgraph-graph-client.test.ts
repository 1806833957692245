import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import type { TokenCredential } from "@azure/identity";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { MatoolkitError, NonRetriableError, reasonCodes, RetryAfterError } from "@matoolkit/domain";
import { startSimulatedTenant, type SimulatedTenant } from "@matoolkit/simulated-tenant";
import { createMsGraphClient, graphErrorOf } from "./msgraph-graph-client.ts";
import { operationName, retryAfterOf } from "./graph-error-mapping.ts";
import type { GraphClient } from "./graph-client.ts";

let tenant: SimulatedTenant;
let graph: GraphClient;
let tokenRequests: { scopes: string | string[]; signal: unknown }[];
const signal = new AbortController().signal;

const credential: TokenCredential = {
  getToken: async (scopes, options) => {
    tokenRequests.push({ scopes, signal: options?.abortSignal });
    return { token: "simulated-token", expiresOnTimestamp: Date.now() + 3_600_000 };
  },
};

async function rejectionOf(promise: Promise<unknown>): Promise<MatoolkitError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!(error instanceof MatoolkitError)) throw new Error(`expected a MatoolkitError, got ${String(error)}`);
  return error;
}

beforeAll(async () => {
  tenant = await startSimulatedTenant({
    seed: { users: [{ id: "u-1", userPrincipalName: "megan@fabrikam.example", displayName: "Megan" }] },
  });
  graph = createMsGraphClient({ credential, baseUrl: tenant.url });
});
afterAll(async () => {
  await tenant.close();
});
beforeEach(() => {
  tokenRequests = [];
});

describe("createMsGraphClient", () => {
  it("sends the credential's token to the simulator's http base URL and parses JSON", async () => {
    const user = await graph.request<{ id: string; displayName: string }>(
      { method: "GET", path: "/users/megan%40fabrikam.example", query: { $select: "id,displayName" } },
      signal,
    );
    expect(user).toMatchObject({ id: "u-1", displayName: "Megan" });
    expect(tokenRequests).toEqual([{ scopes: "https://graph.microsoft.com/.default", signal }]);
  });

  it("keeps the credential's own tenant.auth_failed error (which tenant, which credential)", async () => {
    const own = new NonRetriableError(reasonCodes.tenantAuthFailed, "tenant T (certificate): AADSTS700027");
    const refusing = createMsGraphClient({
      credential: { getToken: async () => Promise.reject(own) },
      baseUrl: tenant.url,
    });
    expect(await rejectionOf(refusing.request({ method: "GET", path: "/users" }, signal))).toBe(own);
  });

  it("encodes query values, targets beta, and resolves undefined for 204", async () => {
    const list = await graph.request<{ value: unknown[] }>(
      { method: "GET", path: "/users", version: "beta", query: { $select: "id, displayName" } },
      signal,
    );
    expect(list.value).toEqual([{ id: "u-1", displayName: "Megan" }]);
    const patched = await graph.request(
      { method: "PATCH", path: "/users/u-1", body: { department: "R&D" } },
      signal,
    );
    expect(patched).toBeUndefined();
    expect(tenant.state.users.get("u-1", "primary")!.department).toBe("R&D");
  });

  it("maps 404 to NonRetriable graph.not_found without the UPN in the message", async () => {
    const error = await rejectionOf(
      graph.request({ method: "GET", path: "/users/nobody%40fabrikam.example" }, signal),
    );
    expect(error).toBeInstanceOf(NonRetriableError);
    expect(error.reason).toBe(reasonCodes.graphNotFound);
    expect(error.message).toBe("Graph GET /v1.0/users/{id} failed: 404 Request_ResourceNotFound");
    expect(graphErrorOf(error)).toMatchObject({ status: 404, code: "Request_ResourceNotFound" });
  });

  it("keeps Graph's error details for functions that treat a conflict as done", async () => {
    const body = {
      accountEnabled: true,
      displayName: "Megan",
      mailNickname: "megan",
      userPrincipalName: "megan@fabrikam.example",
      passwordProfile: { password: "Str0ng!Passw0rd" },
    };
    const error = await rejectionOf(graph.request({ method: "POST", path: "/users", body }, signal));
    expect(error.reason).toBe(reasonCodes.graphBadRequest);
    expect(error.retriable).toBe(false);
    expect(graphErrorOf(error)?.details).toEqual([{ code: "ObjectConflict", target: "userPrincipalName" }]);
  });

  it("maps 429 with Retry-After to RetryAfterError graph.throttled", async () => {
    tenant.faults.arm({ api: "graph", count: 1, retryAfterSeconds: 7 });
    const error = await rejectionOf(graph.request({ method: "GET", path: "/users/u-1" }, signal));
    expect(error).toBeInstanceOf(RetryAfterError);
    expect(error.reason).toBe(reasonCodes.graphThrottled);
    expect((error as RetryAfterError).retryAfterSeconds).toBe(7);
  });

  it("maps 503 with Retry-After to graph.throttled (Graph's other throttling answer)", async () => {
    tenant.faults.arm({ api: "graph", count: 1, status: 503, retryAfterSeconds: 2 });
    const error = await rejectionOf(graph.request({ method: "GET", path: "/users/u-1" }, signal));
    expect(error).toBeInstanceOf(RetryAfterError);
    expect(error.reason).toBe(reasonCodes.graphThrottled);
  });

  it("maps an unknown beta-only segment on v1.0 to NonRetriable graph.bad_request", async () => {
    const error = await rejectionOf(
      graph.request(
        { method: "POST", path: "/users/u-1/convertExternalToInternalMemberUser", body: {} },
        signal,
      ),
    );
    expect(error.reason).toBe(reasonCodes.graphBadRequest);
    expect(error.message).toBe(
      "Graph POST /v1.0/users/{id}/convertExternalToInternalMemberUser failed: 400 BadRequest",
    );
  });

  it("answers 401 graph.unauthorized when the credential gives an empty token", async () => {
    const emptyToken: TokenCredential = {
      getToken: async () => ({ token: "", expiresOnTimestamp: Date.now() + 60_000 }),
    };
    const client = createMsGraphClient({ credential: emptyToken, baseUrl: tenant.url });
    const error = await rejectionOf(client.request({ method: "GET", path: "/users/u-1" }, signal));
    expect(error.reason).toBe(reasonCodes.graphUnauthorized);
    expect(error.retriable).toBe(false);
  });

  it("reports a credential the token endpoint refused as NonRetriable tenant.auth_failed", async () => {
    const refused: TokenCredential = {
      getToken: async () => {
        throw Object.assign(new Error("AADSTS7000215: Invalid client secret provided."), {
          name: "AuthenticationError",
          statusCode: 400,
        });
      },
    };
    const client = createMsGraphClient({ credential: refused, baseUrl: tenant.url });
    const error = await rejectionOf(client.request({ method: "GET", path: "/users/u-1" }, signal));
    expect(error).toBeInstanceOf(NonRetriableError);
    expect(error.reason).toBe(reasonCodes.tenantAuthFailed);
    expect(error.message).not.toContain("AADSTS");
  });

  it("maps a refused connection to transient graph.unavailable", async () => {
    const closedPort = await new Promise<number>((resolve) => {
      const server = createServer();
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo;
        server.close(() => resolve(port));
      });
    });
    const client = createMsGraphClient({ credential, baseUrl: `http://127.0.0.1:${closedPort}` });
    const error = await rejectionOf(client.request({ method: "GET", path: "/users/u-1" }, signal));
    expect(error.reason).toBe(reasonCodes.graphUnavailable);
    expect(error.retriable).toBe(true);
    expect(error).not.toBeInstanceOf(RetryAfterError);
  });

  it("gives up on a request that gets no answer as transient graph.unavailable", async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = silent.address() as AddressInfo;
      const client = createMsGraphClient({
        credential,
        baseUrl: `http://127.0.0.1:${port}`,
        requestTimeoutMs: 200,
      });
      const error = await rejectionOf(client.request({ method: "GET", path: "/users/u-1" }, signal));
      expect(error.reason).toBe(reasonCodes.graphUnavailable);
      expect(error.message).toContain("TimeoutError");
    } finally {
      silent.close();
    }
  });

  it("rejects with the job's abort reason, not a Graph error, when the signal aborts", async () => {
    const controller = new AbortController();
    const reason = new Error("job timed out");
    controller.abort(reason);
    await expect(graph.request({ method: "GET", path: "/users/u-1" }, controller.signal)).rejects.toBe(
      reason,
    );
  });
});

describe("graph error helpers", () => {
  it("names operations without ids or UPNs", () => {
    expect(
      operationName("DELETE", "v1.0", "/groups/7d1c0b7e-4f4e-4b7e-9a51-0a0b1c2d3e4f/members/a%40b.com/$ref"),
    ).toBe("DELETE /v1.0/groups/{id}/members/{id}/$ref");
  });

  it("reads Retry-After as seconds or as an HTTP date", () => {
    const now = () => Date.parse("2026-01-01T00:00:00Z");
    expect(retryAfterOf(new Headers({ "Retry-After": "12" }), now)).toBe(12);
    expect(retryAfterOf(new Headers({ "Retry-After": "Thu, 01 Jan 2026 00:00:30 GMT" }), now)).toBe(30);
    expect(retryAfterOf(new Headers(), now)).toBeUndefined();
  });
});

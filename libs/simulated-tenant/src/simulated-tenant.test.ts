import { afterEach, describe, expect, it } from "vitest";
import { realServicePrerequisiteRules } from "./prerequisite-rules.ts";
import { startSimulatedTenant, type SimulatedTenant } from "./simulated-tenant.ts";

let tenant: SimulatedTenant | undefined;
afterEach(async () => {
  await tenant?.close();
  tenant = undefined;
});

const bearer = { Authorization: "Bearer any-token" };

describe("simulated tenant server", () => {
  it("answers a request without a bearer token with each API's real 401", async () => {
    tenant = await startSimulatedTenant();
    const graph = await fetch(`${tenant.url}/v1.0/users`);
    expect(graph.status).toBe(401);
    expect(graph.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect(await graph.json()).toMatchObject({ error: { code: "InvalidAuthenticationToken" } });

    const exchange = await fetch(`${tenant.url}/adminapi/beta/${tenant.tenantId}/InvokeCommand`, {
      method: "POST",
    });
    expect(exchange.status).toBe(401);
    const body = (await exchange.json()) as { error: { message: string; details: { message: string }[] } };
    expect(body.error.message).toBe("Error executing cmdlet");
    expect(body.error.details[0]!.message.split("|")[1]).toBe("System.UnauthorizedAccessException");
  });

  it("throttles armed requests with 429 or 503 and Retry-After, in each API's error shape", async () => {
    tenant = await startSimulatedTenant();
    const arm = await fetch(`${tenant.url}/_simulator/faults`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ api: "graph", count: 1, retryAfterSeconds: 3 }),
    });
    expect(arm.status).toBe(204);
    tenant.faults.arm({ api: "exchange", count: 1, status: 503, retryAfterSeconds: 5 });

    const graph = await fetch(`${tenant.url}/v1.0/users`, { headers: bearer });
    expect(graph.status).toBe(429);
    expect(graph.headers.get("retry-after")).toBe("3");
    expect(await graph.json()).toMatchObject({ error: { code: "TooManyRequests" } });

    const exchange = await fetch(`${tenant.url}/adminapi/beta/${tenant.tenantId}/InvokeCommand`, {
      method: "POST",
      headers: bearer,
    });
    expect(exchange.status).toBe(503);
    expect(exchange.headers.get("retry-after")).toBe("5");

    const counts = (await (await fetch(`${tenant.url}/_simulator/requests`)).json()) as Record<
      string,
      number
    >;
    expect(counts).toEqual({ graph: 1, exchange: 1, graphFaults: 1, exchangeFaults: 1 });
  });

  it("changes replication delay and throttle rate at run time and refuses bad settings by name", async () => {
    tenant = await startSimulatedTenant({ replicationDelayMs: 10 });
    const put = (body: unknown) =>
      fetch(`${tenant!.url}/_simulator/settings`, {
        method: "PUT",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
    const updated = await put({ replicationDelayMs: 250, throttleRate: 0.5 });
    expect(await updated.json()).toMatchObject({
      replicationDelayMs: 250,
      throttleRate: 0.5,
      retryAfterSeconds: 1,
      prerequisites: realServicePrerequisiteRules,
    });
    expect(tenant.state.replicationDelayMs).toBe(250);
    const relaxed = await put({ prerequisites: { invitationRequiresExternalMail: false } });
    expect(((await relaxed.json()) as { prerequisites: unknown }).prerequisites).toEqual({
      ...realServicePrerequisiteRules,
      invitationRequiresExternalMail: false,
    });
    expect((await put({ prerequisites: { noSuchRule: true } })).status).toBe(400);

    const refused = await put({ throttleRate: 2 });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: string }).error).toMatch(/^throttleRate:/);
  });

  it("re-seeds on reset, from the body when one is given, and empties the change log", async () => {
    tenant = await startSimulatedTenant({
      seed: { users: [{ userPrincipalName: "a@fabrikam.example", displayName: "A" }] },
    });
    tenant.state.recordChange({ api: "graph", operation: "PATCH /v1.0/users", target: "a", detail: "x" });
    const reset = await fetch(`${tenant.url}/_simulator/reset`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ users: [{ userPrincipalName: "b@fabrikam.example", displayName: "B" }] }),
    });
    expect(reset.status).toBe(204);
    const state = (await (await fetch(`${tenant.url}/_simulator/state`)).json()) as {
      users: { displayName: string }[];
    };
    expect(state.users.map((user) => user.displayName)).toEqual(["B"]);
    expect(await (await fetch(`${tenant.url}/_simulator/changes`)).json()).toEqual({ value: [] });

    const bad = await fetch(`${tenant.url}/_simulator/reset`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ users: [{ displayName: "no upn" }] }),
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toContain("users.0.userPrincipalName");
  });
});

import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { TenantCheckReport } from "@matoolkit/domain";
import {
  startSimulatedTenant,
  simulatedWorkerAppId,
  type SimulatedTenant,
} from "@matoolkit/simulated-tenant";
import { guardCredential, staticTokenCredential } from "./credentials.ts";
import { createInvokeCommandExchangeClient } from "./invoke-command-exchange-client.ts";
import { createMsGraphClient } from "./msgraph-graph-client.ts";
import { runbookTenantNeeds } from "./runbook-needs.ts";
import { runTenantCheck } from "./tenant-check.ts";
import type { TenantClients } from "./tenant-clients.ts";

/**
 * The pre-flight check through the real Graph and Exchange adapters against the simulated tenant
 * (which answers the check's reads in Graph's shapes, and can lose a grant or its Exchange role).
 */
let simulator: SimulatedTenant;

beforeAll(async () => {
  simulator = await startSimulatedTenant({
    seed: { domains: ["fabrikam.example", "fabrikam.onmicrosoft.com"] },
  });
});
afterAll(async () => {
  await simulator?.close();
});
beforeEach(() => simulator.reset());

function clients(credential = staticTokenCredential("simulated")): TenantClients {
  return {
    graph: createMsGraphClient({ credential, baseUrl: simulator.url }),
    exchange: createInvokeCommandExchangeClient({
      credential,
      tenantId: simulator.tenantId,
      baseUrl: simulator.url,
    }),
  };
}

const check = (
  tenant: TenantClients,
  steps?: { step: string; function: string; params: Record<string, unknown> }[],
) =>
  runTenantCheck(
    { description: "simulated", appId: simulatedWorkerAppId, clients: tenant },
    steps === undefined ? {} : { runbook: { name: "wave", version: 3, steps } },
    AbortSignal.timeout(30_000),
  );

const lineOf = (report: TenantCheckReport, name: string) => report.lines.find((line) => line.check === name);

describe("runTenantCheck", () => {
  it("passes for every standard function with the default grants", async () => {
    const report = await check(clients());
    expect(report.passed).toBe(true);
    expect(report.functions).toHaveLength(14);
    expect(report.lines.map((line) => [line.check, line.status])).toEqual([
      ["graph.token", "passed"],
      ["graph.permissions", "passed"],
      ["exchange.permission", "passed"],
      ["exchange.token", "passed"],
      ["exchange.role", "passed"],
      ["b2b.invitation_policy", "passed"],
      ["domains.verified", "skipped"],
    ]);
  });

  it("names each permission the runbook's functions miss, and which function needs it", async () => {
    simulator.app.apply({ graphPermissions: ["User.Invite.All", "Application.Read.All"] });
    const report = await check(clients(), [
      { step: "prepare/invite", function: "New-EntraB2BInvitation", params: {} },
      { step: "cutover/upn", function: "Set-EntraUserUPN", params: {} },
    ]);
    expect(report.passed).toBe(false);
    expect(lineOf(report, "graph.permissions")).toEqual({
      check: "graph.permissions",
      status: "failed",
      detail:
        "Missing Microsoft Graph application permission: User.ReadWrite.All (to create and update users, to read users; " +
        "needed by Set-EntraUserUPN, New-EntraB2BInvitation). Grant it with admin consent.",
      // User.ReadWrite.All must be granted anyway, and it covers reading users too.
      missing: ["User.ReadWrite.All"],
    });
    // A Graph-only runbook: no Exchange line at all.
    expect(report.lines.some((line) => line.check.startsWith("exchange."))).toBe(false);
  });

  it("asks for the least privileged permission when nothing else covers it", async () => {
    simulator.app.apply({ graphPermissions: ["User.Invite.All", "Application.Read.All"] });
    const report = await check(clients(), [
      { step: "prepare/invite", function: "New-EntraB2BInvitation", params: {} },
    ]);
    expect(lineOf(report, "graph.permissions")).toMatchObject({
      status: "failed",
      missing: ["User.Read.All"],
    });
  });

  it("says which permission the check itself lacks when it cannot read the grants", async () => {
    simulator.app.apply({ graphPermissions: ["User.ReadWrite.All"] });
    const report = await check(clients(), [
      { step: "p/s", function: "Test-EntraAttributeMatch", params: {} },
    ]);
    expect(lineOf(report, "graph.permissions")).toMatchObject({
      status: "warning",
      missing: ["Application.Read.All"],
    });
    expect(report.passed).toBe(true);
  });

  it("fails the Exchange permission and role lines when they were taken away", async () => {
    simulator.app.apply({ exchangeManageAsApp: false, exchangeRole: null });
    const report = await check(clients(), [
      { step: "p/guids", function: "Set-ExchangeMailUserGuids", params: {} },
    ]);
    expect(lineOf(report, "exchange.permission")).toMatchObject({
      status: "failed",
      missing: ["Exchange.ManageAsApp"],
    });
    expect(lineOf(report, "exchange.token")).toMatchObject({ status: "passed" });
    expect(lineOf(report, "exchange.role")).toMatchObject({
      status: "failed",
      missing: ["Exchange Administrator"],
    });
    expect(lineOf(report, "exchange.role")!.detail).toMatch(
      /^Exchange Online refused Get-OrganizationConfig \(exchange\.unauthorized/u,
    );
  });

  it("warns when only admins and Guest Inviters may invite", async () => {
    simulator.app.apply({ allowInvitesFrom: "adminsAndGuestInviters" });
    const report = await check(clients(), [{ step: "p/i", function: "New-EntraB2BInvitation", params: {} }]);
    expect(lineOf(report, "b2b.invitation_policy")).toMatchObject({ status: "warning", missing: [] });
  });

  it("checks literal target domains against the verified ones, and says which it cannot decide", async () => {
    simulator.app.apply({ unverifiedDomains: ["new.example"] });
    const report = await check(clients(), [
      {
        step: "c/a",
        function: "Set-EntraUserUPN",
        params: { NewUserPrincipalName: "{{Alias}}@FABRIKAM.example" },
      },
      {
        step: "c/b",
        function: "Set-ExchangePrimaryEmail",
        params: { PrimarySmtpAddress: "{{Alias}}@new.example" },
      },
      { step: "c/c", function: "New-EntraUser", params: { UserPrincipalName: "{{TargetUPN}}" } },
      { step: "c/d", function: "New-EntraUser", params: { UserPrincipalName: "x@{{Domain}}" } },
    ]);
    expect(lineOf(report, "domains.verified")).toEqual({
      check: "domains.verified",
      status: "failed",
      detail:
        "Not a verified domain of the tenant: new.example (c/b PrimarySmtpAddress). Add and verify it in the tenant, or fix the runbook.",
      missing: ["new.example"],
    });
    expect(lineOf(report, "domains.undetermined")!.detail).toBe(
      "Decided by member data or an earlier step, so not checked before the batch: c/c UserPrincipalName, c/d UserPrincipalName.",
    );
  });

  it("fails both token lines without quoting the credential's error text or a secret", async () => {
    const secret = "s3cr3t-client-secret-value";
    const refusing = guardCredential(
      {
        getToken: async () => {
          throw Object.assign(new Error(`AADSTS7000215: Invalid client secret provided: ${secret}`), {
            name: "AuthenticationError",
            statusCode: 401,
          });
        },
      },
      "tenant fabrikam (client-secret)",
      [secret],
    );
    const report = await check(clients(refusing), [
      { step: "p/s", function: "Set-ExchangePrimaryEmail", params: {} },
    ]);
    expect(lineOf(report, "graph.token")).toMatchObject({ status: "failed", missing: ["Graph token"] });
    expect(lineOf(report, "graph.token")!.detail).toMatch(
      /^No usable token for Microsoft Graph: tenant\.auth_failed: /u,
    );
    expect(lineOf(report, "exchange.token")).toMatchObject({ status: "failed", missing: ["Exchange token"] });
    expect(lineOf(report, "exchange.role")).toMatchObject({ status: "skipped" });
    expect(JSON.stringify(report)).not.toContain(secret);
    expect(report.passed).toBe(false);
  });
});

describe("runbookTenantNeeds", () => {
  it("lists standard functions, and custom or templated names as unchecked", () => {
    const needs = runbookTenantNeeds([
      { step: "a/1", function: "Set-EntraUserUPN", params: {} },
      { step: "a/2", function: "Invoke-CustomThing", params: {} },
      { step: "a/3", function: "New-{{Kind}}", params: {} },
      { step: "a/4", function: "Set-EntraUserUPN", params: {} },
    ]);
    expect(needs.functions).toEqual(["Set-EntraUserUPN"]);
    expect(needs.unchecked).toEqual(["Invoke-CustomThing", "New-{{Kind}} (name from a template)"]);
  });

  it("never takes a source-tenant address (an invitation's email) for a target domain", () => {
    const needs = runbookTenantNeeds([
      {
        step: "p/i",
        function: "New-EntraB2BInvitation",
        params: { InvitedUserEmailAddress: "a@contoso.example" },
      },
      {
        step: "p/e",
        function: "Set-ExchangeExternalAddress",
        params: { ExternalEmailAddress: "a@contoso.example" },
      },
    ]);
    expect(needs.domains).toEqual([]);
    expect(needs.undeterminedDomains).toEqual([]);
  });
});

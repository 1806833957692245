import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startSimulatedTenant, type SimulatedTenant } from "../simulated-tenant.ts";
import { microsoftGraphAppId, simulatedWorkerAppId } from "../tenant-app.ts";

/** The reads of the pre-flight check, the app's grants as Graph enforces them, and the knobs. */
let simulator: SimulatedTenant;
const auth = { authorization: "Bearer simulated", "content-type": "application/json" };

beforeAll(async () => {
  simulator = await startSimulatedTenant({ seed: { domains: ["fabrikam.example"] } });
});
afterAll(async () => {
  await simulator?.close();
});
beforeEach(() => simulator.reset());

async function graph(path: string, init: RequestInit = {}): Promise<{ status: number; body: any }> {
  const response = await fetch(`${simulator.url}/v1.0${path}`, { ...init, headers: auth });
  return { status: response.status, body: await response.json() };
}

async function grantedPermissions(): Promise<string[]> {
  const self = await graph(`/servicePrincipals(appId='${simulatedWorkerAppId}')?$select=id`);
  expect(self.status).toBe(200);
  expect(Object.keys(self.body).sort()).toEqual(["@odata.context", "id"]);
  const assignments = await graph(`/servicePrincipals/${self.body.id}/appRoleAssignments`);
  const resource = await graph(`/servicePrincipals(appId='${microsoftGraphAppId}')?$select=id,appRoles`);
  const names = new Map(
    resource.body.appRoles.map((role: { id: string; value: string }) => [role.id, role.value]),
  );
  return assignments.body.value
    .filter((assignment: { resourceId: string }) => assignment.resourceId === resource.body.id)
    .map((assignment: { appRoleId: string }) => names.get(assignment.appRoleId))
    .sort();
}

describe("the worker app's grants", () => {
  it("are app role assignments whose appRoleId resolves through Microsoft Graph's appRoles", async () => {
    expect(await grantedPermissions()).toEqual([
      "Application.Read.All",
      "Domain.Read.All",
      "GroupMember.ReadWrite.All",
      "Mail.Send",
      "Policy.Read.All",
      "User-ConvertToInternal.ReadWrite.All",
      "User.Invite.All",
      "User.ReadWrite.All",
    ]);
    const self = await graph(`/servicePrincipals(appId='${simulatedWorkerAppId}')`);
    const [assignment] = (await graph(`/servicePrincipals/${self.body.id}/appRoleAssignments`)).body.value;
    expect(Object.keys(assignment).sort()).toEqual([
      "appRoleId",
      "createdDateTime",
      "deletedDateTime",
      "id",
      "principalDisplayName",
      "principalId",
      "principalType",
      "resourceDisplayName",
      "resourceId",
    ]);
  });

  it("lose a permission through PUT /_simulator/app, and an operation needing it is refused as Graph refuses it", async () => {
    const put = await fetch(`${simulator.url}/_simulator/app`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ graphPermissions: ["User.Read.All", "Application.Read.All"] }),
    });
    expect(put.status).toBe(200);
    expect(await grantedPermissions()).toEqual(["Application.Read.All", "User.Read.All"]);
    const invite = await graph("/invitations", {
      method: "POST",
      body: JSON.stringify({
        invitedUserEmailAddress: "a@contoso.example",
        inviteRedirectUrl: "https://myapps.microsoft.com",
      }),
    });
    expect(invite.status).toBe(403);
    expect(invite.body.error).toMatchObject({
      code: "Authorization_RequestDenied",
      message: "Insufficient privileges to complete the operation.",
    });
  });

  it("refuses an unknown setting by name", async () => {
    const put = await fetch(`${simulator.url}/_simulator/app`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ graphPermissions: ["Mail.ReadWrite"] }),
    });
    expect(put.status).toBe(400);
    expect(((await put.json()) as any).error).toMatch(/^graphPermissions\.0: /u);
  });
});

describe("the tenant settings the check reads", () => {
  it("answers the authorization policy singleton and the domains with isVerified", async () => {
    simulator.app.apply({ allowInvitesFrom: "none", unverifiedDomains: ["new.example"] });
    const policy = await graph("/policies/authorizationPolicy");
    expect(policy.body).toMatchObject({ id: "authorizationPolicy", allowInvitesFrom: "none" });
    const domains = await graph("/domains?$select=id,isVerified");
    expect(domains.body.value).toEqual([
      { id: "fabrikam.example", isVerified: true },
      { id: "new.example", isVerified: false },
    ]);
  });

  it("refuses those reads without Policy.Read.All or Domain.Read.All", async () => {
    simulator.app.apply({ graphPermissions: ["User.ReadWrite.All"] });
    expect((await graph("/policies/authorizationPolicy")).status).toBe(403);
    expect((await graph("/domains")).status).toBe(403);
  });
});

describe("Exchange", () => {
  const invoke = (cmdlet: string) =>
    fetch(`${simulator.url}/adminapi/beta/${simulator.tenantId}/InvokeCommand`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ CmdletInput: { CmdletName: cmdlet, Parameters: {} } }),
    });

  it("runs Get-OrganizationConfig, and refuses every cmdlet once the app has no Exchange role", async () => {
    const organization = await invoke("Get-OrganizationConfig");
    expect(organization.status).toBe(200);
    expect(((await organization.json()) as any).value[0]).toMatchObject({ Name: "fabrikam.example" });

    simulator.app.apply({ exchangeRole: null });
    for (const cmdlet of ["Get-OrganizationConfig", "Get-Recipient"]) {
      const refused = await invoke(cmdlet);
      expect(refused.status).toBe(401);
      expect(((await refused.json()) as any).error).toMatchObject({
        code: "Unauthorized",
        message: `User is not allowed to call ${cmdlet}`,
      });
    }
    simulator.reset();
    expect((await invoke("Get-Recipient")).status).toBe(200);
  });
});

import { afterEach, describe, expect, it } from "vitest";
import { startSimulatedTenant, type SimulatedTenant } from "../simulated-tenant.ts";
import { invokeCommand } from "../../test/exchange/invoke-command.test-helper.ts";

let tenant: SimulatedTenant | undefined;
afterEach(async () => {
  await tenant?.close();
  tenant = undefined;
});

describe("simulated Exchange admin API: distribution groups", () => {
  it("creates a group with its Entra group, adds, lists and removes members, then removes the group", async () => {
    tenant = await startSimulatedTenant();
    const user = (
      await invokeCommand(tenant, "New-MailUser", {
        Name: "kim",
        ExternalEmailAddress: "kim@contoso.example",
      })
    ).body.value[0];
    const group = (await invokeCommand(tenant, "New-DistributionGroup", { Name: "pilot", Type: "Security" }))
      .body.value[0];
    expect(group).toMatchObject({
      RecipientTypeDetails: "MailUniversalSecurityGroup",
      PrimarySmtpAddress: "pilot@fabrikam.example",
    });

    const add = { Identity: "pilot", Member: "kim", BypassSecurityGroupManagerCheck: true };
    expect((await invokeCommand(tenant, "Add-DistributionGroupMember", add)).status).toBe(200);
    const twice = await invokeCommand(tenant, "Add-DistributionGroupMember", add);
    expect(twice.exceptionType).toBe("Microsoft.Exchange.Management.Tasks.MemberAlreadyExistsException");
    const members = await invokeCommand(tenant, "Get-DistributionGroupMember", {
      Identity: "pilot@fabrikam.example",
      ResultSize: "Unlimited",
    });
    expect(members.body.value.map((member: any) => member.Guid)).toEqual([user.Guid]);
    expect(tenant.state.groups.get(group.ExternalDirectoryObjectId)?.members).toEqual([
      user.ExternalDirectoryObjectId,
    ]);

    expect((await invokeCommand(tenant, "Remove-DistributionGroupMember", add)).status).toBe(200);
    expect(
      (await invokeCommand(tenant, "Get-DistributionGroupMember", { Identity: "pilot" })).body.value,
    ).toEqual([]);
    expect(
      (await invokeCommand(tenant, "Remove-DistributionGroup", { Identity: "pilot", Confirm: false })).status,
    ).toBe(200);
    const gone = await invokeCommand(tenant, "Get-DistributionGroup", { Identity: "pilot" });
    expect(gone.exceptionType).toBe(
      "Microsoft.Exchange.Configuration.Tasks.ManagementObjectNotFoundException",
    );
  });

  it("pages results by Prefer odata.maxpagesize, the next page being the same POST to nextLink", async () => {
    tenant = await startSimulatedTenant({
      seed: {
        recipients: ["a", "b", "c"].map((name) => ({
          Name: name,
          RecipientTypeDetails: "MailUser" as const,
          PrimarySmtpAddress: `${name}@fabrikam.example`,
        })),
      },
    });
    const headers = { Prefer: "odata.maxpagesize=2" };
    const first = await invokeCommand(tenant, "Get-Recipient", { ResultSize: "Unlimited" }, { headers });
    expect(first.body.value.map((recipient: any) => recipient.Name)).toEqual(["a", "b"]);
    expect(first.body["@odata.nextLink"]).toMatch(/InvokeCommand\?\$skiptoken=2$/);
    const second = await invokeCommand(
      tenant,
      "Get-Recipient",
      { ResultSize: "Unlimited" },
      { url: first.body["@odata.nextLink"], headers },
    );
    expect(second.body.value.map((recipient: any) => recipient.Name)).toEqual(["c"]);
    expect(second.body["@odata.nextLink"]).toBeUndefined();
  });

  it("refuses a group whose name or address is taken", async () => {
    tenant = await startSimulatedTenant();
    await invokeCommand(tenant, "New-DistributionGroup", { Name: "sales" });
    const sameName = await invokeCommand(tenant, "New-DistributionGroup", {
      Name: "SALES",
      PrimarySmtpAddress: "s2@fabrikam.example",
    });
    expect(sameName.exceptionType).toBe("Microsoft.Exchange.Data.Directory.ADObjectAlreadyExistsException");
    const sameAddress = await invokeCommand(tenant, "New-DistributionGroup", {
      Name: "sales2",
      PrimarySmtpAddress: "sales@fabrikam.example",
    });
    expect(sameAddress.exceptionType).toBe("Microsoft.Exchange.Data.ProxyAddressExistsException");
  });
});

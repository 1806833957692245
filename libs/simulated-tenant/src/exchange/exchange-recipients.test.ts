import { afterEach, describe, expect, it } from "vitest";
import { startSimulatedTenant, type SimulatedTenant } from "../simulated-tenant.ts";
import { exchangeOnlineParameters, onPremisesOnlyParameters } from "./exchange-online-parameters.ts";
import { invokeCommand } from "../../test/exchange/invoke-command.test-helper.ts";

let tenant: SimulatedTenant | undefined;
afterEach(async () => {
  await tenant?.close();
  tenant = undefined;
});

const seed = {
  users: [{ userPrincipalName: "megan@fabrikam.example", displayName: "Megan" }],
  recipients: [
    {
      Name: "megan",
      RecipientTypeDetails: "UserMailbox" as const,
      PrimarySmtpAddress: "megan@fabrikam.example",
      EmailAddresses: ["smtp:megan.b@fabrikam.example"],
      EmailAddressPolicyEnabled: true,
      ExternalDirectoryObjectId: "megan@fabrikam.example",
    },
    {
      Name: "adele",
      RecipientTypeDetails: "MailUser" as const,
      PrimarySmtpAddress: "adele@fabrikam.example",
    },
  ],
};

describe("simulated Exchange admin API: recipients", () => {
  it("creates a mail user with its Entra user, zero mailbox GUIDs and a legacy DN, readable by kind only", async () => {
    tenant = await startSimulatedTenant();
    const created = await invokeCommand(tenant, "New-MailUser", {
      Name: "jo",
      ExternalEmailAddress: "jo@contoso.example",
      PrimarySmtpAddress: "jo@fabrikam.example",
    });
    expect(created.status).toBe(200);
    const mailUser = created.body.value[0];
    expect(mailUser).toMatchObject({
      RecipientTypeDetails: "MailUser",
      ExternalEmailAddress: "SMTP:jo@contoso.example",
      EmailAddresses: ["SMTP:jo@fabrikam.example"],
      ExchangeGuid: "00000000-0000-0000-0000-000000000000",
      ArchiveGuid: "00000000-0000-0000-0000-000000000000",
    });
    expect(mailUser.LegacyExchangeDN).toMatch(/^\/o=ExchangeLabs\/.*\/cn=Recipients\/cn=[0-9a-f]{32}-jo$/);
    expect(tenant.state.users.get(mailUser.ExternalDirectoryObjectId)?.userPrincipalName).toBe(
      "jo@fabrikam.example",
    );

    expect(
      (await invokeCommand(tenant, "get-mailuser", { identity: "JO@fabrikam.example" })).body.value[0].Guid,
    ).toBe(mailUser.Guid);
    const asMailbox = await invokeCommand(tenant, "Get-Mailbox", { Identity: mailUser.Guid });
    expect([asMailbox.status, asMailbox.exceptionType]).toEqual([
      404,
      "Microsoft.Exchange.Configuration.Tasks.ManagementObjectNotFoundException",
    ]);
    const removed = await invokeCommand(tenant, "Remove-MailUser", { Identity: "jo", Confirm: false });
    expect(removed.status).toBe(200);
    expect(tenant.state.recipients.list("primary")).toEqual([]);
    expect(tenant.state.users.get(mailUser.ExternalDirectoryObjectId, "primary")).toBeUndefined();
  });

  it("answers a failed cmdlet as the service does: the typed string only in error.details, a generic error.message", async () => {
    tenant = await startSimulatedTenant({ seed });
    const missing = await invokeCommand(tenant, "Get-Recipient", { Identity: "nobody@fabrikam.example" });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({
      code: "NotFound",
      message: "Error executing cmdlet",
      details: [{ code: "Context", target: "" }],
      innererror: {
        message: "Error executing cmdlet",
        type: "Microsoft.Exchange.Admin.OData.Core.ODataServiceException",
      },
    });
    expect(missing.body.error.details[0].message).toMatch(
      /^Ex[0-9A-F]{6}\|Microsoft\.Exchange\.Configuration\.Tasks\.ManagementObjectNotFoundException\|The operation couldn't be performed because object 'nobody@fabrikam\.example' couldn't be found on '.+'\.$/,
    );
    // Nothing outside details names the cmdlet's exception type.
    expect(JSON.stringify({ ...missing.body.error, details: undefined })).not.toContain("ManagementObject");
  });

  it("binds parameters like PowerShell: unknown names, missing mandatory ones and unknown cmdlets are refused", async () => {
    tenant = await startSimulatedTenant({ seed });
    const unknown = await invokeCommand(tenant, "Set-MailUser", { Identity: "adele", Colour: "blue" });
    expect(unknown.status).toBe(400);
    expect(unknown.exceptionType).toBe("System.Management.Automation.ParameterBindingException");
    expect(unknown.text).toContain("A parameter cannot be found that matches parameter name 'Colour'.");

    const missing = await invokeCommand(tenant, "Set-MailUser", { DisplayName: "Adele" });
    expect(missing.exceptionType).toBe("System.Management.Automation.ParameterBindingException");
    expect(missing.text).toContain("missing mandatory parameters: Identity.");
    const badGuid = await invokeCommand(tenant, "Set-MailUser", {
      Identity: "adele",
      ExchangeGuid: "not-a-guid",
    });
    expect(badGuid.text).toContain("Cannot bind parameter 'ExchangeGuid'");

    const cmdlet = await invokeCommand(tenant, "Set-Nothing", {});
    expect(cmdlet.exceptionType).toBe("System.Management.Automation.CommandNotFoundException");
    expect(cmdlet.text).toContain("'Set-Nothing'");

    const otherTenant = await invokeCommand(
      tenant,
      "Get-Recipient",
      {},
      { url: `${tenant.url}/adminapi/beta/someone-else/InvokeCommand` },
    );
    expect(otherTenant.status).toBe(404);
    const byDomain = await invokeCommand(
      tenant,
      "Get-Recipient",
      {},
      { url: `${tenant.url}/adminapi/beta/fabrikam.example/InvokeCommand` },
    );
    expect(byDomain.body.value).toHaveLength(2);
  });

  it("adds and removes addresses with the hashtable, refuses another recipient's address, warns on a no-op", async () => {
    tenant = await startSimulatedTenant({ seed });
    const add = {
      "@odata.type": "#Exchange.GenericHashTable",
      Add: ["smtp:adele.v@fabrikam.example", "X500:/o=Old/cn=adele"],
    };
    expect(
      (await invokeCommand(tenant, "Set-MailUser", { Identity: "adele", EmailAddresses: add })).status,
    ).toBe(200);
    const again = await invokeCommand(tenant, "Set-MailUser", { Identity: "adele", EmailAddresses: add });
    expect(again.body["@adminapi.warnings"]).toEqual([
      "The command completed successfully but no settings of 'adele' have been modified.",
    ]);
    const adele = (await invokeCommand(tenant, "Get-MailUser", { Identity: "adele" })).body.value[0];
    expect(adele.EmailAddresses).toEqual([
      "SMTP:adele@fabrikam.example",
      "smtp:adele.v@fabrikam.example",
      "X500:/o=Old/cn=adele",
    ]);

    const taken = await invokeCommand(tenant, "Set-Mailbox", {
      Identity: "megan",
      EmailAddresses: { Add: ["smtp:ADELE.V@fabrikam.example"] },
    });
    expect(taken.status).toBe(400);
    expect(taken.exceptionType).toBe("Microsoft.Exchange.Data.ProxyAddressExistsException");
    expect(taken.text).toContain("is already being used by");

    await invokeCommand(tenant, "Set-MailUser", {
      Identity: "adele",
      EmailAddresses: { Remove: ["smtp:adele.v@fabrikam.example"] },
    });
    expect(tenant.state.findRecipient("adele")!.EmailAddresses).toHaveLength(2);
    expect(tenant.state.changes().map((change) => change.operation)).toEqual([
      "Set-MailUser",
      "Set-MailUser",
    ]);
  });

  it("changes a mailbox's primary with WindowsEmailAddress though its address policy reads on, keeping the old primary as a secondary", async () => {
    tenant = await startSimulatedTenant({ seed });
    const set = await invokeCommand(tenant, "Set-Mailbox", {
      Identity: "megan",
      WindowsEmailAddress: "megan.b@fabrikam.example",
    });
    expect(set.status).toBe(200);
    expect(tenant.state.findRecipient("megan")).toMatchObject({
      PrimarySmtpAddress: "megan.b@fabrikam.example",
      WindowsEmailAddress: "megan.b@fabrikam.example",
      EmailAddresses: ["SMTP:megan.b@fabrikam.example", "smtp:megan@fabrikam.example"],
      EmailAddressPolicyEnabled: true,
    });
  });

  it.each(
    Object.entries(onPremisesOnlyParameters).flatMap(([cmdlet, names]) =>
      names.map((name) => [cmdlet, name]),
    ),
  )(
    "refuses the on-premises-only %s -%s with Exchange Online's parameter binding error, changing nothing",
    async (cmdlet, parameter) => {
      tenant = await startSimulatedTenant({ seed });
      const identity = cmdlet === "Set-Mailbox" ? "megan" : "adele";
      const value = parameter === "EmailAddressPolicyEnabled" ? false : `${identity}.x@fabrikam.example`;
      const refused = await invokeCommand(tenant, cmdlet, { Identity: identity, [parameter]: value });
      expect([refused.status, refused.exceptionType, refused.text]).toEqual([
        400,
        "System.Management.Automation.ParameterBindingException",
        `A parameter cannot be found that matches parameter name '${parameter}'.`,
      ]);
      expect(tenant.state.changes()).toEqual([]);
    },
  );

  it("declares no on-premises-only parameter for any cmdlet", () => {
    for (const [cmdlet, names] of Object.entries(onPremisesOnlyParameters)) {
      const declared = Object.keys(exchangeOnlineParameters[cmdlet]!).map((name) => name.toLowerCase());
      expect(names.filter((name) => declared.includes(name.toLowerCase()))).toEqual([]);
    }
  });

  it("binds Set-MailUser -PrimarySmtpAddress but changes nothing (functional only on-premises)", async () => {
    tenant = await startSimulatedTenant({ seed });
    const ignored = await invokeCommand(tenant, "Set-MailUser", {
      Identity: "adele",
      PrimarySmtpAddress: "adele.x@fabrikam.example",
    });
    expect(ignored.status).toBe(200);
    expect(ignored.body["@adminapi.warnings"]).toHaveLength(1);
    expect(tenant.state.findRecipient("adele")!.PrimarySmtpAddress).toBe("adele@fabrikam.example");
  });

  it("resolves a user-based recipient by its Entra user's UPN too", async () => {
    tenant = await startSimulatedTenant({
      seed: {
        users: [{ userPrincipalName: "kim@fabrikam.onmicrosoft.example", displayName: "Kim" }],
        recipients: [
          {
            Name: "kim",
            RecipientTypeDetails: "MailUser",
            PrimarySmtpAddress: "kim@fabrikam.example",
            ExternalDirectoryObjectId: "kim@fabrikam.onmicrosoft.example",
          },
        ],
      },
    });
    const found = await invokeCommand(tenant, "Get-Recipient", {
      Identity: "KIM@fabrikam.onmicrosoft.example",
    });
    expect(found.body.value[0].Name).toBe("kim");
  });

  it("sets a mail user's external address and mailbox GUIDs", async () => {
    tenant = await startSimulatedTenant({ seed });
    const exchangeGuid = "6a5b4c3d-2e1f-4a0b-9c8d-7e6f5a4b3c2d";
    const result = await invokeCommand(tenant, "Set-MailUser", {
      Identity: "adele",
      ExternalEmailAddress: "adele@contoso.example",
      ExchangeGuid: exchangeGuid.toUpperCase(),
    });
    expect(result.status).toBe(200);
    expect(tenant.state.findRecipient("adele")).toMatchObject({
      ExternalEmailAddress: "SMTP:adele@contoso.example",
      ExchangeGuid: exchangeGuid,
    });
    const onMailbox = await invokeCommand(tenant, "Set-MailUser", {
      Identity: "megan",
      ExchangeGuid: exchangeGuid,
    });
    expect(onMailbox.status).toBe(404);
  });

  it("serves reads from the replica but resolves writes on the primary during replication delay", async () => {
    tenant = await startSimulatedTenant({ replicationDelayMs: 200, behaviours: { replicaReads: "settled" } });
    await invokeCommand(tenant, "New-MailUser", {
      Name: "late",
      ExternalEmailAddress: "late@contoso.example",
    });
    expect((await invokeCommand(tenant, "Get-Recipient", { Identity: "late" })).status).toBe(404);
    const write = await invokeCommand(tenant, "Set-MailUser", {
      Identity: "late",
      EmailAddresses: { Add: ["smtp:late2@fabrikam.example"] },
    });
    expect(write.status).toBe(200);
    const duplicate = await invokeCommand(tenant, "New-MailUser", {
      Name: "other",
      ExternalEmailAddress: "o@contoso.example",
      PrimarySmtpAddress: "late2@fabrikam.example",
    });
    expect(duplicate.exceptionType).toBe("Microsoft.Exchange.Data.ProxyAddressExistsException");
    await new Promise((resolve) => setTimeout(resolve, 250));
    const read = await invokeCommand(tenant, "Get-Recipient", { Identity: "late2@fabrikam.example" });
    expect(read.body.value[0].Name).toBe("late");
  });
});

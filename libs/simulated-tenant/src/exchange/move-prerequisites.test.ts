import { afterEach, describe, expect, it } from "vitest";
import type { TenantSeedInput } from "../seed.ts";
import { startSimulatedTenant, type SimulatedTenant } from "../simulated-tenant.ts";
import { invokeCommand } from "../../test/exchange/invoke-command.test-helper.ts";

let tenant: SimulatedTenant | undefined;
afterEach(async () => {
  await tenant?.close();
  tenant = undefined;
});

const zeroGuid = "00000000-0000-0000-0000-000000000000";
const seed: TenantSeedInput = {
  users: [
    {
      userPrincipalName: "adele@fabrikam.example",
      displayName: "Adele",
      assignedPlans: [{ service: "exchange" }],
    },
    { userPrincipalName: "lee@fabrikam.example", displayName: "Lee" },
  ],
  recipients: [
    {
      Name: "adele",
      RecipientTypeDetails: "MailUser",
      PrimarySmtpAddress: "adele@fabrikam.example",
      ExternalEmailAddress: "adele@contoso.example",
      ExternalDirectoryObjectId: "adele@fabrikam.example",
    },
    {
      Name: "lee",
      RecipientTypeDetails: "MailUser",
      PrimarySmtpAddress: "lee@fabrikam.example",
      ExternalDirectoryObjectId: "lee@fabrikam.example",
      PreviousRecipientTypeDetails: "UserMailbox",
    },
  ],
};

describe("cross-tenant move prerequisites of target mail users", () => {
  it("Get-User shows that a mail user had a mailbox; Get-MailUser does not", async () => {
    tenant = await startSimulatedTenant({ seed });
    const user = await invokeCommand(tenant, "Get-User", { Identity: "lee" });
    expect(user.body.value).toEqual([
      expect.objectContaining({
        RecipientTypeDetails: "MailUser",
        PreviousRecipientTypeDetails: "UserMailbox",
        UserPrincipalName: "lee@fabrikam.example",
      }),
    ]);
    const mailUser = await invokeCommand(tenant, "Get-MailUser", { Identity: "lee" });
    expect(mailUser.body.value[0]).not.toHaveProperty("PreviousRecipientTypeDetails");
  });

  it("a mail user licensed for Exchange before its ExchangeGuid was stamped has become a mailbox, unless the rule is off", async () => {
    tenant = await startSimulatedTenant({ seed });
    const adele = tenant.state.findRecipient("adele")!;
    expect(adele.RecipientTypeDetails).toBe("UserMailbox");
    expect(adele.ExchangeGuid).not.toBe(zeroGuid);
    expect((await invokeCommand(tenant, "Get-MailUser", { Identity: "adele" })).status).toBe(404);
    await tenant.close();

    tenant = await startSimulatedTenant({ seed, prerequisites: { exchangeLicenseProvisionsMailbox: false } });
    expect(tenant.state.findRecipient("adele")).toMatchObject({
      RecipientTypeDetails: "MailUser",
      ExchangeGuid: zeroGuid,
    });
  });
});

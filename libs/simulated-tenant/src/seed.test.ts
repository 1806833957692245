import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { applySeed, loadTenantSeed, parseTenantSeed, TenantSeedError } from "./seed.ts";
import { TenantState } from "./tenant-state.ts";

async function file(name: string, text: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "seed-"));
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

function emptyState(): TenantState {
  return new TenantState({
    tenantId: "t",
    domains: ["fabrikam.example"],
    replicationDelayMs: 1000,
    now: Date.now,
  });
}

describe("tenant seed", () => {
  it("loads a JSON seed, links recipients and group members to users, and is readable at once", async () => {
    const path = await file(
      "tenant.json",
      JSON.stringify({
        users: [
          {
            userPrincipalName: "adele@fabrikam.example",
            displayName: "Adele",
            proxyAddresses: ["SMTP:adele@fabrikam.example"],
          },
        ],
        groups: [{ displayName: "Pilot", members: ["adele@fabrikam.example"] }],
        recipients: [
          {
            Name: "adele",
            RecipientTypeDetails: "MailUser",
            PrimarySmtpAddress: "adele@fabrikam.example",
            ExternalEmailAddress: "adele@contoso.example",
            ExternalDirectoryObjectId: "adele@fabrikam.example",
          },
          {
            Name: "pilot-dl",
            RecipientTypeDetails: "MailUniversalDistributionGroup",
            PrimarySmtpAddress: "pilot@fabrikam.example",
            Members: ["adele@fabrikam.example"],
          },
        ],
      }),
    );
    const state = emptyState();
    applySeed(state, await loadTenantSeed(path));

    // Replication delay applies to writes, not to the starting state.
    const user = state.findUser("ADELE@fabrikam.example")!;
    expect(user).toMatchObject({
      displayName: "Adele",
      userType: "Member",
      externalUserState: null,
      mailNickname: "adele",
    });
    expect(state.groups.list()[0]!.members).toEqual([user.id]);
    const mailUser = state.findRecipient("adele@fabrikam.example")!;
    expect(mailUser).toMatchObject({
      ExternalDirectoryObjectId: user.id,
      EmailAddresses: ["SMTP:adele@fabrikam.example"],
      ExternalEmailAddress: "SMTP:adele@contoso.example",
      ExchangeGuid: "00000000-0000-0000-0000-000000000000",
    });
    expect(state.findRecipient("pilot-dl")!.Members).toEqual([mailUser.Guid]);
  });

  it("loads a CSV seed with one user per row, groups and mail recipients", async () => {
    const path = await file(
      "tenant.csv",
      [
        "UserPrincipalName,DisplayName,Department,Groups,RecipientType,PrimarySmtpAddress,EmailAddresses,UserType",
        "megan@fabrikam.example,Megan,Sales,Pilot;Sales,UserMailbox,megan@fabrikam.example,smtp:megan.b@fabrikam.example,",
        "guest@fabrikam.example,Guest,,Pilot,,,,Guest",
      ].join("\n"),
    );
    const state = emptyState();
    applySeed(state, await loadTenantSeed(path));

    expect(
      state.users.list().map((user) => [user.userPrincipalName, user.userType, user.identities[0]!.issuer]),
    ).toEqual([
      ["megan@fabrikam.example", "Member", "fabrikam.example"],
      ["guest@fabrikam.example", "Guest", "ExternalAzureAD"],
    ]);
    expect(state.groups.list().map((group) => [group.displayName, group.members.length])).toEqual([
      ["Pilot", 2],
      ["Sales", 1],
    ]);
    expect(state.findRecipient("megan.b@fabrikam.example")?.RecipientTypeDetails).toBe("UserMailbox");
  });

  it("names the file, the row and the field of a bad entry, never its value", async () => {
    const csv = await file("bad.csv", "UserPrincipalName,DisplayName\nnot-an-upn,Someone Secret\n");
    const error = await loadTenantSeed(csv).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TenantSeedError);
    expect((error as Error).message).toContain("row 2.userPrincipalName");
    expect((error as Error).message).not.toContain("not-an-upn");

    expect(() =>
      parseTenantSeed({
        recipients: [{ Name: "x", RecipientTypeDetails: "Mailbox", PrimarySmtpAddress: "x@y" }],
      }),
    ).toThrow(/recipients\.0\.RecipientTypeDetails/);
    await expect(loadTenantSeed(await file("seed.yaml", ""))).rejects.toThrow(
      /unsupported file type ".yaml" \(allowed: .json, .csv\)/,
    );
    await expect(loadTenantSeed("/nonexistent/seed.json")).rejects.toThrow(
      /Cannot read tenant seed \/nonexistent\/seed.json: ENOENT/,
    );
  });
});

import { randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import { MatoolkitError, NonRetriableError, reasonCodes } from "@matoolkit/domain";
import type { TenantFixture } from "../contract/tenant-fixture.ts";
import type { WorkerFunction } from "../../../src/functions/worker-function.ts";
import { createExchangeFunctions } from "../../../src/functions/exchange/index.ts";

/**
 * The Exchange standard functions' contract, run against the simulated tenant (`npm test`) and a
 * real one (`npm run test:tenant`). It creates its own mail users and distribution groups through
 * `fixture.tenant.exchange` (mailboxes need licences, so mailbox-only behaviour is tested on the
 * simulator only), waits out replication with `fixture.eventually`, and removes what it created.
 */
export function exchangeContract(getFixture: () => TenantFixture): void {
  const functions = createExchangeFunctions({ lookupPatience: { attempts: 3, delayMs: 200 } });
  const run = (name: string, params: Record<string, unknown>): Promise<unknown> => {
    const fixture = getFixture();
    return (functions[name] as WorkerFunction)(params, fixture.context());
  };

  it("Add-ExchangeSecondaryEmail adds the address once, re-runs as a no-op, refuses another's address", async () => {
    const fixture = getFixture();
    const user = await newMailUser(fixture);
    const other = await newMailUser(fixture);
    const address = `${fixture.uniqueName("alias")}@${fixture.domain}`;

    expect(await run("Add-ExchangeSecondaryEmail", { Identity: user.guid, EmailAddress: address })).toBe(
      true,
    );
    const after = await waitFor(
      fixture,
      user.guid,
      (r) => addresses(r).includes(`smtp:${address}`.toLowerCase()),
      "address",
    );
    expect(
      await run("Add-ExchangeSecondaryEmail", {
        Identity: user.primary,
        EmailAddress: address.toUpperCase(),
      }),
    ).toBe(true);
    expect(addresses(await readMailUser(fixture, user.guid))).toEqual(addresses(after));

    const taken = await failure(
      run("Add-ExchangeSecondaryEmail", { Identity: other.guid, EmailAddress: address }),
    );
    expectPermanent(taken, reasonCodes.exchangeConflict);
    expect(taken.message).toContain("EmailAddress");
    expect(taken.message).not.toContain(address);
  });

  it("Add-ExchangeSecondaryEmail fails permanently for an unknown recipient or a malformed address, naming the parameter", async () => {
    const fixture = getFixture();
    const unknown = `${fixture.uniqueName("nobody")}@${fixture.domain}`;
    const missing = await failure(
      run("Add-ExchangeSecondaryEmail", { Identity: unknown, EmailAddress: `x@${fixture.domain}` }),
    );
    expectPermanent(missing, reasonCodes.exchangeNotFound);
    expect(missing.message).toContain("Identity");

    const bad = await failure(
      run("Add-ExchangeSecondaryEmail", { Identity: "someone", EmailAddress: "not an address" }),
    );
    expectPermanent(bad, reasonCodes.workerInvalidParameters);
    expect(bad.message).toContain("EmailAddress");
    expect(bad.message).not.toContain("not an address");
  });

  it("Set-ExchangePrimaryEmail makes the address primary, keeps the old one as secondary, re-runs as a no-op", async () => {
    const fixture = getFixture();
    const user = await newMailUser(fixture);
    const address = `${fixture.uniqueName("primary")}@${fixture.domain}`;

    expect(await run("Set-ExchangePrimaryEmail", { Identity: user.guid, PrimarySmtpAddress: address })).toBe(
      true,
    );
    const after = await waitFor(
      fixture,
      user.guid,
      (r) => String(r.PrimarySmtpAddress).toLowerCase() === address.toLowerCase(),
      "new primary",
    );
    expect(after.EmailAddresses).toEqual(expect.arrayContaining([`SMTP:${address}`, `smtp:${user.primary}`]));
    expect(await run("Set-ExchangePrimaryEmail", { Identity: user.guid, PrimarySmtpAddress: address })).toBe(
      true,
    );
    expect(addresses(await readMailUser(fixture, user.guid))).toEqual(addresses(after));

    const missing = await failure(
      run("Set-ExchangePrimaryEmail", { Identity: randomUUID(), PrimarySmtpAddress: address }),
    );
    expectPermanent(missing, reasonCodes.exchangeNotFound);
  });

  it("Set-ExchangeExternalAddress sets a mail user's external address, re-runs as a no-op, refuses a group", async () => {
    const fixture = getFixture();
    const user = await newMailUser(fixture);
    const external = `${fixture.uniqueName("ext")}@source.example`;

    expect(
      await run("Set-ExchangeExternalAddress", { Identity: user.guid, ExternalEmailAddress: external }),
    ).toBe(true);
    await waitFor(
      fixture,
      user.guid,
      (r) => String(r.ExternalEmailAddress).toLowerCase() === `smtp:${external}`,
      "external address",
    );
    expect(
      await run("Set-ExchangeExternalAddress", {
        Identity: user.guid,
        ExternalEmailAddress: `SMTP:${external}`,
      }),
    ).toBe(true);

    const group = await newGroup(fixture, []);
    const refused = await failure(
      run("Set-ExchangeExternalAddress", { Identity: group.guid, ExternalEmailAddress: external }),
    );
    expectPermanent(refused, reasonCodes.exchangeBadRequest);
    expect(refused.message).toMatch(/MailUniversal\w+Group, not a MailUser/);
  });

  it("Set-ExchangeMailUserGuids sets the GUIDs and the X500 address, re-runs as a no-op, refuses bad GUIDs", async () => {
    const fixture = getFixture();
    const user = await newMailUser(fixture);
    const exchangeGuid = randomUUID();
    const archiveGuid = randomUUID();
    const legacyDn = `/o=ExchangeLabs/ou=Exchange Administrative Group (FYDIBOHF23SPDLT)/cn=Recipients/cn=${fixture.uniqueName("src")}`;
    const params = {
      Identity: user.guid,
      ExchangeGuid: exchangeGuid.toUpperCase(),
      ArchiveGuid: archiveGuid,
      LegacyExchangeDN: legacyDn,
    };

    expect(await run("Set-ExchangeMailUserGuids", params)).toBe(true);
    const after = await waitFor(
      fixture,
      user.guid,
      (r) => String(r.ExchangeGuid).toLowerCase() === exchangeGuid,
      "ExchangeGuid",
    );
    expect(String(after.ArchiveGuid).toLowerCase()).toBe(archiveGuid);
    expect(addresses(after)).toContain(`x500:${legacyDn}`.toLowerCase());
    expect(await run("Set-ExchangeMailUserGuids", params)).toBe(true);
    expect(addresses(await readMailUser(fixture, user.guid))).toEqual(addresses(after));

    const bad = await failure(
      run("Set-ExchangeMailUserGuids", { Identity: user.guid, ExchangeGuid: "not-a-guid" }),
    );
    expectPermanent(bad, reasonCodes.workerInvalidParameters);
    expect(bad.message).toContain("ExchangeGuid");
  });

  it("Test-ExchangeAttributeMatch compares case-insensitively and prefix-aware, and fails naming only properties", async () => {
    const fixture = getFixture();
    const user = await newMailUser(fixture);
    const expected = {
      primarysmtpaddress: user.primary.toUpperCase(),
      EmailAddresses: [`SMTP:${user.primary}`],
      ExternalEmailAddress: user.external,
      RecipientTypeDetails: "MailUser",
    };
    const matched = await run("Test-ExchangeAttributeMatch", { Identity: user.guid, Attributes: expected });
    expect(matched).toEqual({ complete: true, data: { Match: true, Mismatches: [] } });

    const secondaryOnly = { EmailAddresses: [`smtp:${user.primary}`], DisplayName: "Someone Else" };
    const mismatch = await failure(
      run("Test-ExchangeAttributeMatch", { Identity: user.guid, Attributes: secondaryOnly }),
    );
    expectPermanent(mismatch, reasonCodes.checkMismatch);
    expect(mismatch.message).toContain("EmailAddresses, DisplayName");
    expect(mismatch.message).not.toContain("Someone Else");

    const reported = await run("Test-ExchangeAttributeMatch", {
      Identity: user.guid,
      Attributes: { EmailAddresses: [user.primary, `${fixture.uniqueName("none")}@${fixture.domain}`] },
      FailOnMismatch: "false",
      MultiValueMode: "exact",
    });
    expect(reported).toEqual({ complete: true, data: { Match: false, Mismatches: ["EmailAddresses"] } });
  });

  it("Test-ExchangeGroupMembership recognises a member by any identity and reports or fails a wrong membership", async () => {
    const fixture = getFixture();
    const member = await newMailUser(fixture);
    const outsider = await newMailUser(fixture);
    const group = await newGroup(fixture, [member.guid]);

    for (const identity of [member.guid, member.name, member.primary.toUpperCase()]) {
      const result = await run("Test-ExchangeGroupMembership", {
        GroupIdentity: group.primary,
        MemberIdentity: identity,
      });
      expect(result).toEqual({ complete: true, data: { IsMember: true, Match: true } });
    }
    const absent = await run("Test-ExchangeGroupMembership", {
      GroupIdentity: group.guid,
      MemberIdentity: outsider.primary,
      ShouldBeMember: "false",
    });
    expect(absent).toEqual({ complete: true, data: { IsMember: false, Match: true } });

    const wrong = await failure(
      run("Test-ExchangeGroupMembership", { GroupIdentity: group.guid, MemberIdentity: outsider.guid }),
    );
    expectPermanent(wrong, reasonCodes.checkMembership);
    const reported = await run("Test-ExchangeGroupMembership", {
      GroupIdentity: group.guid,
      MemberIdentity: member.guid,
      ShouldBeMember: false,
      FailOnMismatch: false,
    });
    expect(reported).toEqual({ complete: true, data: { IsMember: true, Match: false } });

    const noGroup = await failure(
      run("Test-ExchangeGroupMembership", { GroupIdentity: randomUUID(), MemberIdentity: member.guid }),
    );
    expectPermanent(noGroup, reasonCodes.exchangeNotFound);
    expect(noGroup.message).toContain("GroupIdentity");
  });
}

export interface CreatedRecipient {
  readonly guid: string;
  readonly name: string;
  readonly primary: string;
  readonly external: string;
}

/** A mail user created for the test, removed after it, returned once it is readable. */
export async function newMailUser(fixture: TenantFixture): Promise<CreatedRecipient> {
  const name = fixture.uniqueName("mtk-mu");
  const primary = `${name}@${fixture.domain}`;
  const external = `${name}@source.example`;
  const signal = new AbortController().signal;
  const { value } = await fixture.tenant.exchange.invoke(
    "New-MailUser",
    { Name: name, ExternalEmailAddress: external, PrimarySmtpAddress: primary },
    signal,
  );
  const guid = String(value[0]?.Guid);
  fixture.cleanup(async () => {
    await fixture.tenant.exchange.invoke("Remove-MailUser", { Identity: guid, Confirm: false }, signal);
  });
  await waitFor(fixture, guid, () => true, "the new mail user");
  return { guid, name, primary, external };
}

/** A distribution group with these members, removed after the test, returned once it lists them. */
export async function newGroup(
  fixture: TenantFixture,
  members: readonly string[],
): Promise<CreatedRecipient> {
  const name = fixture.uniqueName("mtk-dl");
  const primary = `${name}@${fixture.domain}`;
  const signal = new AbortController().signal;
  const { value } = await fixture.tenant.exchange.invoke(
    "New-DistributionGroup",
    { Name: name, PrimarySmtpAddress: primary },
    signal,
  );
  const guid = String(value[0]?.Guid);
  fixture.cleanup(async () => {
    await fixture.tenant.exchange.invoke(
      "Remove-DistributionGroup",
      { Identity: guid, BypassSecurityGroupManagerCheck: true, Confirm: false },
      signal,
    );
  });
  for (const member of members) {
    await fixture.eventually(
      () =>
        probe(() =>
          fixture.tenant.exchange.invoke(
            "Add-DistributionGroupMember",
            { Identity: guid, Member: member, BypassSecurityGroupManagerCheck: true },
            signal,
          ),
        ),
      "adding a group member",
    );
  }
  await fixture.eventually(async () => {
    const listed = await probe(() =>
      fixture.tenant.exchange.invoke(
        "Get-DistributionGroupMember",
        { Identity: guid, ResultSize: "Unlimited" },
        signal,
      ),
    );
    return listed !== undefined && listed.value.length === members.length ? listed : undefined;
  }, "the group's members");
  return { guid, name, primary, external: primary };
}

async function readMailUser(fixture: TenantFixture, guid: string): Promise<Record<string, unknown>> {
  const { value } = await fixture.tenant.exchange.invoke(
    "Get-MailUser",
    { Identity: guid },
    new AbortController().signal,
  );
  return value[0]!;
}

/** Reads until the recipient is visible and satisfies `ready` (replication delay). */
function waitFor(
  fixture: TenantFixture,
  guid: string,
  ready: (recipient: Record<string, unknown>) => boolean,
  what: string,
): Promise<Record<string, unknown>> {
  return fixture.eventually(async () => {
    const recipient = await probe(() => readMailUserOrGroup(fixture, guid));
    return recipient !== undefined && ready(recipient) ? recipient : undefined;
  }, what);
}

async function readMailUserOrGroup(fixture: TenantFixture, guid: string): Promise<Record<string, unknown>> {
  const { value } = await fixture.tenant.exchange.invoke(
    "Get-Recipient",
    { Identity: guid },
    new AbortController().signal,
  );
  const type = String(value[0]?.RecipientTypeDetails);
  return type === "MailUser" ? readMailUser(fixture, guid) : value[0]!;
}

/** undefined while the object is not found yet (not replicated), the result once it is. */
async function probe<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof MatoolkitError && error.reason === reasonCodes.exchangeNotFound) return undefined;
    throw error;
  }
}

function addresses(recipient: Record<string, unknown>): string[] {
  return (recipient.EmailAddresses as string[]).map((address) => address.toLowerCase()).sort();
}

async function failure(promise: Promise<unknown>): Promise<MatoolkitError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof MatoolkitError) return error;
    throw error;
  }
  throw new Error("expected the function to fail");
}

function expectPermanent(error: MatoolkitError, reason: string): void {
  expect(error).toBeInstanceOf(NonRetriableError);
  expect(error.reason).toBe(reason);
}

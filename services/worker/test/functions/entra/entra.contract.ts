import { expect, it } from "vitest";
import { reasonCodes } from "@matoolkit/domain";
import type { TenantFixture } from "../contract/tenant-fixture.ts";
import type { FunctionModule } from "../../../src/functions/worker-function.ts";
import {
  addMember,
  createGroup,
  createGuest,
  createUser,
  deleteUser,
  expectFailure,
  memberIds,
  readUser,
} from "./entra-contract-objects.ts";
import { createEntraFunctions, type EntraFunctionOptions } from "../../../src/functions/entra/index.ts";

type Envelope<T> = { complete: true; data: T };

/**
 * The Entra functions' contract: success, idempotent re-run and a permanent error for each of
 * the eight, against whatever tenant `getFixture` gives (the simulator in `npm test`, a real one
 * in `npm run test:tenant`). Every object is created here through Graph and removed afterwards.
 * `options` only shortens the replication grace for the simulator.
 */
export function entraContract(getFixture: () => TenantFixture, options: EntraFunctionOptions = {}): void {
  const functions: FunctionModule = createEntraFunctions(options);
  const run = <T = unknown>(name: string, params: Record<string, unknown>): Promise<T> =>
    functions[name]!(params, getFixture().context()) as Promise<T>;

  it("New-EntraUser creates a user, then finds it on a re-run without writing", async () => {
    const fixture = getFixture();
    const upn = `${fixture.uniqueName("newuser")}@${fixture.domain}`;
    fixture.cleanup(() => deleteUser(fixture, upn));
    const params = {
      UserPrincipalName: upn,
      DisplayName: "New User",
      Department: "Migration",
      AccountEnabled: "false",
    };

    const first = await run<Envelope<{ UserId: string; Created: boolean }>>("New-EntraUser", params);
    expect(first).toEqual({
      complete: true,
      data: { UserId: expect.any(String), UserPrincipalName: upn, Created: true },
    });
    const read = await fixture.eventually(
      () => readUser(fixture, upn, "id,department,accountEnabled,mailNickname"),
      "the new user",
    );
    expect(read).toMatchObject({ id: first.data.UserId, department: "Migration", accountEnabled: false });
    expect(read.mailNickname).toBe(upn.split("@")[0]);

    const again = await run<Envelope<{ UserId: string; Created: boolean }>>("New-EntraUser", params);
    expect(again.data).toEqual({ UserId: first.data.UserId, UserPrincipalName: upn, Created: false });
  });

  it("New-EntraUser fails permanently on a bad parameter, naming it but not its value", async () => {
    const fixture = getFixture();
    const upn = `${fixture.uniqueName("baduser")}@${fixture.domain}`;
    await expectFailure(run("New-EntraUser", { UserPrincipalName: upn }), {
      reason: reasonCodes.workerInvalidParameters,
      names: "DisplayName",
      never: [upn],
    });
    await expectFailure(
      run("New-EntraUser", { UserPrincipalName: "someone@unverified-domain.invalid", DisplayName: "X" }),
      {
        reason: reasonCodes.graphBadRequest,
        never: ["unverified-domain"],
      },
    );
  });

  it("Set-EntraUserUPN renames a user; a re-run by old UPN or id succeeds and changes nothing", async () => {
    const fixture = getFixture();
    const user = await createUser(fixture);
    const newUpn = `${fixture.uniqueName("renamed")}@${fixture.domain}`;

    expect(
      await run("Set-EntraUserUPN", { UserId: user.userPrincipalName, NewUserPrincipalName: newUpn }),
    ).toBe(true);
    const renamed = await fixture.eventually(() => readUser(fixture, newUpn), "the renamed user");
    expect(renamed.id).toBe(user.id);

    await fixture.eventually(
      async () => ((await readUser(fixture, user.userPrincipalName)) ? undefined : true),
      "the old UPN to go",
    );
    expect(
      await run("Set-EntraUserUPN", { UserId: user.userPrincipalName, NewUserPrincipalName: newUpn }),
    ).toBe(true);
    expect(await run("Set-EntraUserUPN", { UserId: user.id, NewUserPrincipalName: newUpn })).toBe(true);
    expect(await readUser(fixture, user.id)).toMatchObject({ id: user.id, userPrincipalName: newUpn });
  });

  it("Set-EntraUserUPN refuses a UPN another user holds, and fails when the user does not exist", async () => {
    const fixture = getFixture();
    const [user, other] = [await createUser(fixture), await createUser(fixture)];
    await expectFailure(
      run("Set-EntraUserUPN", { UserId: user.id, NewUserPrincipalName: other.userPrincipalName }),
      {
        reason: reasonCodes.graphConflict,
        names: "NewUserPrincipalName",
        never: [other.userPrincipalName],
      },
    );
    const missing = `${fixture.uniqueName("missing")}@${fixture.domain}`;
    await expectFailure(
      run("Set-EntraUserUPN", {
        UserId: missing,
        NewUserPrincipalName: `${fixture.uniqueName("x")}@${fixture.domain}`,
      }),
      { reason: reasonCodes.graphNotFound, names: "UserId", never: [missing] },
    );
  });

  it("Add-EntraGroupMember adds once; a re-run succeeds without a second membership", async () => {
    const fixture = getFixture();
    const [groupId, user] = [await createGroup(fixture), await createUser(fixture)];
    expect(await run("Add-EntraGroupMember", { GroupId: groupId, UserId: user.userPrincipalName })).toBe(
      true,
    );
    await fixture.eventually(
      async () => ((await memberIds(fixture, groupId)).includes(user.id) ? true : undefined),
      "membership",
    );
    expect(await run("Add-EntraGroupMember", { GroupId: groupId, UserId: user.id })).toBe(true);
    expect(await memberIds(fixture, groupId)).toEqual([user.id]);
  });

  it("Add-EntraGroupMember fails permanently when the group does not exist", async () => {
    const fixture = getFixture();
    const user = await createUser(fixture);
    await expectFailure(
      run("Add-EntraGroupMember", { GroupId: "00000000-0000-4000-8000-000000000001", UserId: user.id }),
      { reason: reasonCodes.graphNotFound, names: "GroupId" },
    );
  });

  it("Remove-EntraGroupMember removes a member; a re-run (no longer a member) succeeds", async () => {
    const fixture = getFixture();
    const [groupId, user] = [await createGroup(fixture), await createUser(fixture)];
    await fixture.eventually(async () => ((await readUser(fixture, user.id)) ? true : undefined), "the user");
    await addMember(fixture, groupId, user.id);
    await fixture.eventually(
      async () => ((await memberIds(fixture, groupId)).includes(user.id) ? true : undefined),
      "membership",
    );

    expect(await run("Remove-EntraGroupMember", { GroupId: groupId, UserId: user.userPrincipalName })).toBe(
      true,
    );
    await fixture.eventually(
      async () => ((await memberIds(fixture, groupId)).length === 0 ? true : undefined),
      "removal",
    );
    expect(await run("Remove-EntraGroupMember", { GroupId: groupId, UserId: user.id })).toBe(true);
  });

  it("Remove-EntraGroupMember fails permanently when the user does not exist", async () => {
    const fixture = getFixture();
    const groupId = await createGroup(fixture);
    const missing = `${fixture.uniqueName("missing")}@${fixture.domain}`;
    await expectFailure(run("Remove-EntraGroupMember", { GroupId: groupId, UserId: missing }), {
      reason: reasonCodes.graphNotFound,
      names: "UserId",
      never: [missing],
    });
  });

  it("New-EntraB2BInvitation invites an internal user once; a re-run sends nothing more", async () => {
    const fixture = getFixture();
    const external = `${fixture.uniqueName("ext")}@example.com`;
    // invite-internal-users.md: mail must be the external address before the invitation.
    const user = await createUser(fixture, { mail: external });
    const params = { UserId: user.id, InvitedUserEmailAddress: external };
    expect(await run("New-EntraB2BInvitation", params)).toBe(true);
    const invited = await fixture.eventually(async () => {
      const read = await readUser(fixture, user.id, "id,externalUserState");
      return read?.externalUserState ? read : undefined;
    }, "the invitation to show");
    expect(invited.externalUserState).toBe("PendingAcceptance");
    expect(await run("New-EntraB2BInvitation", { ...params, SendInvitationMessage: "true" })).toBe(true);
  });

  it("New-EntraB2BInvitation fails permanently for a bad address or a missing user", async () => {
    const fixture = getFixture();
    const user = await createUser(fixture);
    await expectFailure(
      run("New-EntraB2BInvitation", { UserId: user.id, InvitedUserEmailAddress: "not-an-address" }),
      {
        reason: reasonCodes.workerInvalidParameters,
        names: "InvitedUserEmailAddress",
        never: ["not-an-address"],
      },
    );
    await expectFailure(
      run("New-EntraB2BInvitation", {
        UserId: "00000000-0000-4000-8000-000000000002",
        InvitedUserEmailAddress: "a@example.com",
      }),
      { reason: reasonCodes.graphNotFound, names: "UserId" },
    );
  });

  it("Convert-EntraB2BToInternal refuses a guest whose invitation is still pending, and leaves it external", async () => {
    const fixture = getFixture();
    // A guest just invited has not redeemed: it does not authenticate externally yet
    // (convert-external-users-internal.md: only externally authenticated users are eligible).
    const guest = await createGuest(fixture);
    const newUpn = `${fixture.uniqueName("converted")}@${fixture.domain}`;
    await expectFailure(run("Convert-EntraB2BToInternal", { UserId: guest.id, UserPrincipalName: newUpn }), {
      reason: reasonCodes.entraInvitationPending,
      names: "PendingAcceptance",
      never: [newUpn, guest.userPrincipalName],
    });
    const read = await readUser(fixture, guest.id, "id,userPrincipalName,externalUserState");
    expect(read).toMatchObject({
      userPrincipalName: guest.userPrincipalName,
      externalUserState: "PendingAcceptance",
    });
  });

  it("Convert-EntraB2BToInternal fails permanently when the user does not exist", async () => {
    await expectFailure(
      run("Convert-EntraB2BToInternal", { UserId: "00000000-0000-4000-8000-000000000003" }),
      {
        reason: reasonCodes.graphNotFound,
        names: "UserId",
      },
    );
  });

  it("Test-EntraAttributeMatch matches case-insensitively and multi-value aware, again on a re-run", async () => {
    const fixture = getFixture();
    const other = `${fixture.uniqueName("other")}@example.com`;
    const user = await createUser(fixture, {
      department: "Sales",
      jobTitle: "Engineer",
      otherMails: [other, "b@example.com"],
    });
    const params = {
      UserId: user.userPrincipalName,
      Attributes: {
        Department: "sales",
        JOBTITLE: "engineer",
        otherMails: other.toUpperCase(),
        companyName: null,
      },
    };
    const expected = { complete: true, data: { Match: true, Mismatches: [] } };
    expect(await run("Test-EntraAttributeMatch", params)).toEqual(expected);
    expect(await run("Test-EntraAttributeMatch", params)).toEqual(expected);
    const exact = {
      ...params,
      Attributes: { otherMails: ["b@example.com", other] },
      MultiValueMode: "exact",
    };
    expect(await run("Test-EntraAttributeMatch", exact)).toEqual(expected);
  });

  it("Test-EntraAttributeMatch fails with check.mismatch naming attributes, or reports it when asked", async () => {
    const fixture = getFixture();
    const user = await createUser(fixture, { department: "Sales", otherMails: ["a@example.com"] });
    const params = {
      UserId: user.id,
      Attributes: JSON.stringify({ department: "Finance", otherMails: ["a@example.com", "z@example.com"] }),
    };
    await expectFailure(run("Test-EntraAttributeMatch", params), {
      reason: reasonCodes.checkMismatch,
      names: "department, otherMails",
      never: ["Finance", "Sales", "z@example.com"],
    });
    expect(await run("Test-EntraAttributeMatch", { ...params, FailOnMismatch: "False" })).toEqual({
      complete: true,
      data: { Match: false, Mismatches: ["department", "otherMails"] },
    });
    await expectFailure(
      run("Test-EntraAttributeMatch", { UserId: user.id, Attributes: { shoeSize: "42" } }),
      {
        reason: reasonCodes.graphBadRequest,
        names: "shoeSize",
      },
    );
    await expectFailure(
      run("Test-EntraAttributeMatch", {
        UserId: "00000000-0000-4000-8000-000000000004",
        Attributes: { department: "x" },
      }),
      {
        reason: reasonCodes.graphNotFound,
        names: "UserId",
      },
    );
  });

  it("Test-EntraGroupMembership confirms a membership, the same on a re-run", async () => {
    const fixture = getFixture();
    const [groupId, user] = [await createGroup(fixture), await createUser(fixture)];
    await fixture.eventually(async () => ((await readUser(fixture, user.id)) ? true : undefined), "the user");
    await addMember(fixture, groupId, user.id);
    const params = { GroupId: groupId, UserId: user.userPrincipalName, FailOnMismatch: false };
    const result = await fixture.eventually(async () => {
      const answer = await run<Envelope<{ IsMember: boolean; Match: boolean }>>(
        "Test-EntraGroupMembership",
        params,
      );
      return answer.data.IsMember ? answer : undefined;
    }, "membership to show");
    expect(result).toEqual({ complete: true, data: { IsMember: true, Match: true } });
    expect(await run("Test-EntraGroupMembership", { ...params, FailOnMismatch: true })).toEqual(result);
    expect(await run("Test-EntraGroupMembership", { ...params, ShouldBeMember: "false" })).toEqual({
      complete: true,
      data: { IsMember: true, Match: false },
    });
  });

  it("Test-EntraGroupMembership fails with check.membership, or graph.not_found for a missing group", async () => {
    const fixture = getFixture();
    const [groupId, user] = [await createGroup(fixture), await createUser(fixture)];
    await expectFailure(run("Test-EntraGroupMembership", { GroupId: groupId, UserId: user.id }), {
      reason: reasonCodes.checkMembership,
    });
    expect(
      await run("Test-EntraGroupMembership", { GroupId: groupId, UserId: user.id, ShouldBeMember: false }),
    ).toEqual({
      complete: true,
      data: { IsMember: false, Match: true },
    });
    await expectFailure(
      run("Test-EntraGroupMembership", { GroupId: "00000000-0000-4000-8000-000000000005", UserId: user.id }),
      { reason: reasonCodes.graphNotFound, names: "GroupId" },
    );
  });
}

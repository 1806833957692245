import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MatoolkitError, reasonCodes } from "@matoolkit/domain";
import { redeemInvitations } from "@matoolkit/simulated-tenant";
import type { GraphClient } from "../../tenant/graph-client.ts";
import { invokeWithThrottleRetry } from "../../throttle-retry.ts";
import {
  startSimulatedFixture,
  type SimulatedFixture,
} from "../../../test/functions/contract/simulated-fixture.ts";
import { settledReplicas } from "../../../test/functions/contract/settled-replicas.ts";
import type { TenantFixture } from "../../../test/functions/contract/tenant-fixture.ts";
import type { FunctionModule } from "../worker-function.ts";
import {
  addMember,
  createGroup,
  createGuest,
  createUser,
  expectFailure,
  readUser,
} from "../../../test/functions/entra/entra-contract-objects.ts";
import { entraContract } from "../../../test/functions/entra/entra.contract.ts";
import { createEntraFunctions } from "./index.ts";

describe("Entra functions on the simulated tenant (contract)", () => {
  let simulated: SimulatedFixture;
  beforeAll(async () => {
    simulated = await startSimulatedFixture();
  });
  afterAll(async () => {
    await simulated.close();
  });
  entraContract(() => simulated.fixture, { replicationGraceMs: 300 });
});

describe("Entra functions under throttling (the worker's retry loop)", () => {
  let simulated: SimulatedFixture;
  let fixture: TenantFixture;
  const functions: FunctionModule = createEntraFunctions({ replicationGraceMs: 300 });
  beforeAll(async () => {
    simulated = await startSimulatedFixture();
    fixture = simulated.fixture;
  });
  afterAll(async () => {
    await simulated.close();
  });

  /** Two 429s with Retry-After: 0, then the function's calls go through on the third attempt. */
  async function throttledTwice(name: string, params: Record<string, unknown>): Promise<unknown> {
    simulated.simulator.faults.arm({ api: "graph", count: 2, retryAfterSeconds: 0 });
    const outcome = await invokeWithThrottleRetry(
      (attempt) => functions[name]!(params, fixture.context({ attempt })),
      { maxAttempts: 5, baseDelayMs: 1, maxDelayMs: 5 },
      new AbortController().signal,
    );
    expect(outcome).toMatchObject({ ok: true, attempts: 3 });
    return outcome.ok ? outcome.value : undefined;
  }

  it("New-EntraUser", async () => {
    const upn = `${fixture.uniqueName("throttled")}@${fixture.domain}`;
    const result = await throttledTwice("New-EntraUser", { UserPrincipalName: upn, DisplayName: "T" });
    expect(result).toMatchObject({ data: { Created: true } });
    expect(
      simulated.simulator.state.users.list("primary").filter((u) => u.userPrincipalName === upn),
    ).toHaveLength(1);
  });

  it("Set-EntraUserUPN", async () => {
    const user = await createUser(fixture);
    const newUpn = `${fixture.uniqueName("t")}@${fixture.domain}`;
    expect(await throttledTwice("Set-EntraUserUPN", { UserId: user.id, NewUserPrincipalName: newUpn })).toBe(
      true,
    );
    expect(simulated.simulator.state.users.get(user.id)!.userPrincipalName).toBe(newUpn);
  });

  it("Add-EntraGroupMember and Remove-EntraGroupMember", async () => {
    const [groupId, user] = [await createGroup(fixture), await createUser(fixture)];
    expect(await throttledTwice("Add-EntraGroupMember", { GroupId: groupId, UserId: user.id })).toBe(true);
    expect(simulated.simulator.state.groups.get(groupId)!.members).toEqual([user.id]);
    expect(await throttledTwice("Remove-EntraGroupMember", { GroupId: groupId, UserId: user.id })).toBe(true);
    expect(simulated.simulator.state.groups.get(groupId)!.members).toEqual([]);
  });

  it("New-EntraB2BInvitation", async () => {
    const user = await createUser(fixture, { mail: "t@example.com" });
    const params = { UserId: user.id, InvitedUserEmailAddress: "t@example.com" };
    expect(await throttledTwice("New-EntraB2BInvitation", params)).toBe(true);
    expect(
      simulated.simulator.state.invitations.list().filter((i) => i.invitedUserId === user.id),
    ).toHaveLength(1);
  });

  it("Convert-EntraB2BToInternal", async () => {
    const guest = await createGuest(fixture);
    redeemInvitations(simulated.simulator.state, guest.id);
    const upn = `${fixture.uniqueName("conv")}@${fixture.domain}`;
    expect(
      await throttledTwice("Convert-EntraB2BToInternal", { UserId: guest.id, UserPrincipalName: upn }),
    ).toBe(true);
    expect(simulated.simulator.state.users.get(guest.id)).toMatchObject({
      userPrincipalName: upn,
      externalUserState: null,
    });
  });

  it("Test-EntraAttributeMatch and Test-EntraGroupMembership", async () => {
    const [groupId, user] = [await createGroup(fixture), await createUser(fixture, { department: "Ops" })];
    await addMember(fixture, groupId, user.id);
    const attributes = { UserId: user.id, Attributes: { department: "ops" } };
    expect(await throttledTwice("Test-EntraAttributeMatch", attributes)).toEqual({
      complete: true,
      data: { Match: true, Mismatches: [] },
    });
    expect(await throttledTwice("Test-EntraGroupMembership", { GroupId: groupId, UserId: user.id })).toEqual({
      complete: true,
      data: { IsMember: true, Match: true },
    });
  });
});

describe.concurrent("Entra functions under replication delay (reads lag writes by 200 ms)", () => {
  let simulated: SimulatedFixture;
  let fixture: TenantFixture;
  const functions: FunctionModule = createEntraFunctions({ replicationGraceMs: 3_000 });
  const run = (name: string, params: Record<string, unknown>) => functions[name]!(params, fixture.context());
  beforeAll(async () => {
    simulated = await startSimulatedFixture({ replicationDelayMs: 200, behaviours: settledReplicas });
    fixture = simulated.fixture;
  });
  afterAll(async () => {
    await simulated.close();
  });
  const state = () => simulated.simulator.state;

  it("New-EntraUser run twice back to back creates one user", async () => {
    const upn = `${fixture.uniqueName("twice")}@${fixture.domain}`;
    const first = await run("New-EntraUser", { UserPrincipalName: upn, DisplayName: "Twice" });
    const second = await run("New-EntraUser", { UserPrincipalName: upn, DisplayName: "Twice" });
    expect(first).toMatchObject({ data: { Created: true } });
    expect(second).toMatchObject({ data: { Created: false, UserId: (first as any).data.UserId } });
    expect(
      state()
        .users.list("primary")
        .filter((u) => u.userPrincipalName === upn),
    ).toHaveLength(1);
  });

  it("Set-EntraUserUPN right after the create, then again: the re-run changes nothing", async () => {
    const user = await createUser(fixture);
    const newUpn = `${fixture.uniqueName("fresh")}@${fixture.domain}`;
    const renames = () =>
      state()
        .changes()
        .filter((c) => c.detail.includes(newUpn));
    expect(await run("Set-EntraUserUPN", { UserId: user.id, NewUserPrincipalName: newUpn })).toBe(true);
    expect(renames()).toHaveLength(1);
    expect(
      await run("Set-EntraUserUPN", { UserId: user.userPrincipalName, NewUserPrincipalName: newUpn }),
    ).toBe(true);
    expect(await run("Set-EntraUserUPN", { UserId: user.id, NewUserPrincipalName: newUpn })).toBe(true);
    expect(state().users.get(user.id, "primary")!.userPrincipalName).toBe(newUpn);
    expect(renames()).toHaveLength(1);
  });

  it("Add-EntraGroupMember right after creating group and user, twice: one membership", async () => {
    const [groupId, user] = [await createGroup(fixture), await createUser(fixture)];
    expect(await run("Add-EntraGroupMember", { GroupId: groupId, UserId: user.id })).toBe(true);
    expect(await run("Add-EntraGroupMember", { GroupId: groupId, UserId: user.id })).toBe(true);
    expect(state().groups.get(groupId, "primary")!.members).toEqual([user.id]);
  });

  it("Remove-EntraGroupMember twice back to back", async () => {
    const [groupId, user] = [await createGroup(fixture), await createUser(fixture)];
    await addMember(fixture, groupId, user.id);
    expect(await run("Remove-EntraGroupMember", { GroupId: groupId, UserId: user.id })).toBe(true);
    expect(await run("Remove-EntraGroupMember", { GroupId: groupId, UserId: user.id })).toBe(true);
    expect(state().groups.get(groupId, "primary")!.members).toEqual([]);
  });

  it("New-EntraB2BInvitation twice back to back sends one invitation email", async () => {
    const user = await createUser(fixture, { mail: "once@example.com" });
    const params = {
      UserId: user.id,
      InvitedUserEmailAddress: "once@example.com",
      SendInvitationMessage: true,
    };
    expect(await run("New-EntraB2BInvitation", params)).toBe(true);
    expect(await run("New-EntraB2BInvitation", params)).toBe(true);
    const emails = state()
      .changes()
      .filter((c) => c.target === user.userPrincipalName && c.detail.includes("email sent"));
    expect(emails).toHaveLength(1);
    expect(
      state()
        .invitations.list("primary")
        .filter((i) => i.invitedUserId === user.id),
    ).toHaveLength(1);
  });

  it("New-EntraB2BInvitation whose answer was lost is not sent again on the retry", async () => {
    const user = await createUser(fixture, { mail: "lost@example.com" });
    // Graph accepted the invitation, but the answer never arrived (connection reset).
    const lossy: GraphClient = {
      serviceRoot: fixture.tenant.graph.serviceRoot,
      request: async (request, signal) => {
        const answer = await fixture.tenant.graph.request(request, signal);
        if (request.path === "/invitations") throw new MatoolkitError(reasonCodes.graphUnavailable, "reset");
        return answer as never;
      },
    };
    const params = {
      UserId: user.id,
      InvitedUserEmailAddress: "lost@example.com",
      SendInvitationMessage: true,
    };
    const lossyContext = fixture.context({ tenant: { ...fixture.tenant, graph: lossy } });
    await expect(functions["New-EntraB2BInvitation"]!(params, lossyContext)).rejects.toThrow("reset");
    expect(await run("New-EntraB2BInvitation", params)).toBe(true);
    expect(
      state()
        .invitations.list("primary")
        .filter((i) => i.invitedUserId === user.id),
    ).toHaveLength(1);
  });

  it("Convert-EntraB2BToInternal twice back to back converts once", async () => {
    const guest = await createGuest(fixture);
    redeemInvitations(state(), guest.id);
    const upn = `${fixture.uniqueName("conv")}@${fixture.domain}`;
    expect(await run("Convert-EntraB2BToInternal", { UserId: guest.id, UserPrincipalName: upn })).toBe(true);
    expect(await run("Convert-EntraB2BToInternal", { UserId: guest.id, UserPrincipalName: upn })).toBe(true);
    const conversions = state()
      .changes()
      .filter((c) => c.operation.includes("convertExternalToInternalMemberUser"));
    expect(conversions.filter((c) => c.detail.includes(upn))).toHaveLength(1);
  });

  it("Convert-EntraB2BToInternal right after the invitation refuses: it is pending, though reads still show an internal user", async () => {
    const user = await createUser(fixture, { mail: "someone@contoso.example" });
    const upn = `${fixture.uniqueName("invited")}@${fixture.domain}`;
    expect(
      await run("New-EntraB2BInvitation", {
        UserId: user.id,
        InvitedUserEmailAddress: "someone@contoso.example",
      }),
    ).toBe(true);
    // The invitation has not replicated: a read shows the user as internal, as it was before.
    expect(simulated.simulator.state.users.get(user.id)?.externalUserState).toBeNull();
    await expectFailure(run("Convert-EntraB2BToInternal", { UserId: user.id, UserPrincipalName: upn }), {
      reason: reasonCodes.entraInvitationPending,
      never: [upn, "someone@contoso.example"],
    });
    expect(state().users.get(user.id, "primary")).toMatchObject({
      userPrincipalName: user.userPrincipalName,
      externalUserState: "PendingAcceptance",
      externalUserConvertedOn: null,
    });
  });

  it("Test-EntraAttributeMatch and Test-EntraGroupMembership right after the writes", async () => {
    const [groupId, user] = [await createGroup(fixture), await createUser(fixture, { jobTitle: "Lead" })];
    await addMember(fixture, groupId, user.id);
    expect(
      await run("Test-EntraAttributeMatch", { UserId: user.id, Attributes: { jobTitle: "LEAD" } }),
    ).toMatchObject({
      data: { Match: true },
    });
    expect(await run("Test-EntraGroupMembership", { GroupId: groupId, UserId: user.id })).toMatchObject({
      data: { IsMember: true, Match: true },
    });
  });
});

describe("Set-EntraUserUPN rolled back right after the rename (reads lag writes by 300 ms)", () => {
  let simulated: SimulatedFixture;
  let fixture: TenantFixture;
  const functions: FunctionModule = createEntraFunctions({ replicationGraceMs: 3_000 });
  const run = (name: string, params: Record<string, unknown>) => functions[name]!(params, fixture.context());
  beforeAll(async () => {
    simulated = await startSimulatedFixture({ replicationDelayMs: 300, behaviours: settledReplicas });
    fixture = simulated.fixture;
  });
  afterAll(async () => {
    await simulated.close();
  });

  it("Set-EntraUserUPN restores the staging UPN right after set-final-upn, though reads still show the staging UPN", async () => {
    const staging = await createUser(fixture);
    await fixture.eventually(
      async () => ((await readUser(fixture, staging.id)) ? true : undefined),
      "the user",
    );
    const finalUpn = `${fixture.uniqueName("final")}@${fixture.domain}`;
    const users = simulated.simulator.state.users;

    expect(await run("Set-EntraUserUPN", { UserId: staging.id, NewUserPrincipalName: finalUpn })).toBe(true);
    // The rename has not replicated: a read shows the staging UPN, the very one the rollback asks for.
    expect(users.get(staging.id)!.userPrincipalName).toBe(staging.userPrincipalName);
    expect(
      await run("Set-EntraUserUPN", { UserId: staging.id, NewUserPrincipalName: staging.userPrincipalName }),
    ).toBe(true);
    expect(users.get(staging.id, "primary")!.userPrincipalName).toBe(staging.userPrincipalName);

    // A re-run of the rollback changes nothing more.
    const changes = simulated.simulator.state.changes();
    expect(
      await run("Set-EntraUserUPN", { UserId: staging.id, NewUserPrincipalName: staging.userPrincipalName }),
    ).toBe(true);
    expect(simulated.simulator.state.changes()).toEqual(changes);
  });
});

describe("B2B prerequisites (invite-internal-users.md, convert-external-users-internal.md)", () => {
  let simulated: SimulatedFixture;
  let fixture: TenantFixture;
  const functions: FunctionModule = createEntraFunctions({ replicationGraceMs: 300 });
  const run = (name: string, params: Record<string, unknown>) => functions[name]!(params, fixture.context());
  beforeAll(async () => {
    simulated = await startSimulatedFixture();
    fixture = simulated.fixture;
  });
  afterAll(async () => {
    await simulated.close();
  });
  const invitationsOf = (userId: string) =>
    simulated.simulator.state.invitations.list("primary").filter((i) => i.invitedUserId === userId);

  it("New-EntraB2BInvitation refuses a user whose mail is not the external address, without calling Graph", async () => {
    const user = await createUser(fixture, { mail: `${fixture.uniqueName("m")}@${fixture.domain}` });
    await expectFailure(
      run("New-EntraB2BInvitation", { UserId: user.id, InvitedUserEmailAddress: "adele@contoso.example" }),
      { reason: reasonCodes.entraInvitationMailMismatch, names: "mail", never: ["adele@contoso.example"] },
    );
    expect(invitationsOf(user.id)).toEqual([]);
    expect(simulated.simulator.state.changes().filter((c) => c.operation.includes("invitations"))).toEqual(
      [],
    );
  });

  it("New-EntraB2BInvitation refuses a user synced with onPremisesUserPrincipalName, without calling Graph", async () => {
    const user = await createUser(fixture, { mail: "lee@contoso.example" });
    const state = simulated.simulator.state;
    // Entra Connect Sync's default rule writes it; Graph cannot (it is read-only there).
    state.users.put({
      ...state.users.get(user.id, "primary")!,
      onPremisesSyncEnabled: true,
      onPremisesUserPrincipalName: "lee@corp.contoso.example",
    });
    await expectFailure(
      run("New-EntraB2BInvitation", { UserId: user.id, InvitedUserEmailAddress: "lee@contoso.example" }),
      {
        reason: reasonCodes.entraInvitationSyncedUser,
        names: "onPremisesUserPrincipalName",
        never: ["corp.contoso"],
      },
    );
    expect(invitationsOf(user.id)).toEqual([]);
  });

  it("Convert-EntraB2BToInternal converts a redeemed guest, stamped externalUserConvertedOn; re-runs by id or new UPN send nothing", async () => {
    const guest = await createGuest(fixture);
    expect(redeemInvitations(simulated.simulator.state, guest.id)).toBe(1);
    const newUpn = `${fixture.uniqueName("converted")}@${fixture.domain}`;
    expect(await run("Convert-EntraB2BToInternal", { UserId: guest.id, UserPrincipalName: newUpn })).toBe(
      true,
    );
    expect(simulated.simulator.state.users.get(guest.id, "primary")).toMatchObject({
      userPrincipalName: newUpn,
      externalUserState: null,
      externalUserConvertedOn: expect.any(String),
    });
    const conversions = () =>
      simulated.simulator.state.changes().filter((c) => c.operation.includes("convertExternalToInternal"));
    expect(conversions()).toHaveLength(1);
    expect(await run("Convert-EntraB2BToInternal", { UserId: guest.id, UserPrincipalName: newUpn })).toBe(
      true,
    );
    expect(
      await run("Convert-EntraB2BToInternal", { UserId: guest.userPrincipalName, UserPrincipalName: newUpn }),
    ).toBe(true);
    expect(conversions()).toHaveLength(1);
  });

  it("Convert-EntraB2BToInternal refuses an internal user that was never external, instead of calling it converted", async () => {
    const user = await createUser(fixture);
    await expectFailure(run("Convert-EntraB2BToInternal", { UserId: user.id }), {
      reason: reasonCodes.entraNotExternallyAuthenticated,
      never: [user.userPrincipalName],
    });
    expect(simulated.simulator.state.users.get(user.id, "primary")!.externalUserConvertedOn).toBeNull();
  });
});

import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startSimulatedTenant, type SimulatedTenant } from "../simulated-tenant.ts";

let tenant: SimulatedTenant;

async function call(method: string, path: string, body?: unknown) {
  const response = await fetch(`${tenant.url}${path}`, {
    method,
    headers: {
      Authorization: "Bearer test",
      ...(body === undefined ? {} : { "Content-Type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text === "" ? undefined : (JSON.parse(text) as any) };
}

const ref = (id: string) => ({ "@odata.id": `https://graph.microsoft.com/v1.0/directoryObjects/${id}` });

beforeEach(async () => {
  tenant = await startSimulatedTenant({
    seed: {
      users: [
        {
          id: "u-1",
          userPrincipalName: "megan@fabrikam.example",
          displayName: "Megan",
          mail: "megan@contoso.example",
        },
        { id: "u-2", userPrincipalName: "lee@fabrikam.example", displayName: "Lee" },
        {
          id: "u-guest",
          userPrincipalName: "sam_contoso.example#EXT#@fabrikam.example",
          displayName: "Sam",
          userType: "Guest",
          externalUserState: "Accepted",
        },
      ],
      groups: [
        { id: "g-outer", displayName: "Outer", members: ["g-inner"] },
        { id: "g-inner", displayName: "Inner", members: ["u-1"] },
      ],
    },
  });
});
afterEach(async () => {
  await tenant.close();
});

describe("simulated Graph groups and membership", () => {
  it("creates, reads and deletes a group", async () => {
    const created = await call("POST", "/v1.0/groups", {
      displayName: "Pilot",
      mailNickname: "pilot",
      mailEnabled: false,
      securityEnabled: true,
    });
    expect(created.status).toBe(201);
    const read = await call("GET", `/v1.0/groups/${created.body.id}?$select=displayName`);
    expect(read.body).toMatchObject({ id: created.body.id, displayName: "Pilot" });
    expect((await call("POST", "/v1.0/groups", { displayName: "No flags" })).status).toBe(400);
    expect((await call("DELETE", `/v1.0/groups/${created.body.id}`)).status).toBe(204);
    expect((await call("GET", `/v1.0/groups/${created.body.id}`)).status).toBe(404);
  });

  it("adds a member once; a second add is Graph's 400 'already exist'", async () => {
    expect((await call("POST", "/v1.0/groups/g-inner/members/$ref", ref("u-2"))).status).toBe(204);
    const again = await call("POST", "/v1.0/groups/g-inner/members/$ref", ref("u-2"));
    expect(again.status).toBe(400);
    expect(again.body.error).toMatchObject({
      code: "Request_BadRequest",
      message:
        "One or more added object references already exist for the following modified properties: 'members'.",
    });
    const members = await call("GET", "/v1.0/groups/g-inner/members?$select=id");
    expect(members.body.value.map((member: any) => member.id)).toEqual(["u-1", "u-2"]);
    expect(members.body.value[0]["@odata.type"]).toBe("#microsoft.graph.user");
    expect(tenant.state.changes().filter((change) => change.detail.includes("added member"))).toHaveLength(1);
  });

  it("answers 404 for an unknown group or member, and for removing a non-member", async () => {
    expect((await call("POST", "/v1.0/groups/nope/members/$ref", ref("u-2"))).status).toBe(404);
    expect((await call("POST", "/v1.0/groups/g-inner/members/$ref", ref("nope"))).status).toBe(404);
    const notMember = await call("DELETE", "/v1.0/groups/g-inner/members/u-2/$ref");
    expect(notMember.status).toBe(404);
    expect(notMember.body.error.code).toBe("Request_ResourceNotFound");
    expect((await call("DELETE", "/v1.0/groups/g-inner/members/u-1/$ref")).status).toBe(204);
  });

  it("checkMemberGroups is transitive through nested groups", async () => {
    const answer = await call("POST", "/v1.0/users/u-1/checkMemberGroups", {
      groupIds: ["g-outer", "g-inner", "x"],
    });
    expect(answer.body.value).toEqual(["g-outer", "g-inner"]);
    const none = await call("POST", "/v1.0/users/u-2/checkMemberGroups", { groupIds: ["g-outer"] });
    expect(none.body.value).toEqual([]);
    expect((await call("POST", "/v1.0/users/u-2/checkMemberGroups", {})).status).toBe(400);
  });
});

describe("simulated Graph B2B", () => {
  it("invites an internal user: records the invitation and whether an email went out", async () => {
    const invited = await call("POST", "/v1.0/invitations", {
      invitedUserEmailAddress: "megan@contoso.example",
      inviteRedirectUrl: "https://myapplications.microsoft.com",
      sendInvitationMessage: true,
      invitedUser: { id: "u-1" },
    });
    expect(invited.status).toBe(201);
    expect(invited.body).toMatchObject({ status: "PendingAcceptance", invitedUser: { id: "u-1" } });
    const user = tenant.state.users.get("u-1")!;
    expect(user.externalUserState).toBe("PendingAcceptance");
    // Until the user redeems, it signs in with its own credentials.
    expect(user.identities.some((identity) => identity.signInType === "federated")).toBe(false);
    expect(tenant.state.invitations.list()).toEqual([
      expect.objectContaining({ invitedUserId: "u-1", sendInvitationMessage: true }),
    ]);
    expect(tenant.state.changes().at(-1)!.detail).toContain("invitation email sent");

    // Not convertible while pending; redeemed (the simulator stands in for the user), it is.
    const body = {
      userPrincipalName: "megan.b@fabrikam.example",
      passwordProfile: { password: "Str0ng!Passw0rd", forceChangePasswordNextSignIn: true },
    };
    const pending = await call("POST", "/beta/users/u-1/convertExternalToInternalMemberUser", body);
    expect(pending.status).toBe(400);
    expect(pending.body.error).toMatchObject({
      code: "badRequest",
      message: "The user authentication is already internal and is not eligible for conversion.",
    });
    const redeemed = await fetch(`${tenant.url}/_simulator/invitations/redeem`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ userId: "u-1" }),
    });
    expect(await redeemed.json()).toEqual({ redeemed: 1 });
    expect(tenant.state.users.get("u-1")).toMatchObject({ externalUserState: "Accepted" });
    expect(tenant.state.invitations.list()[0]!.status).toBe("Completed");
    const converted = await call("POST", "/beta/users/u-1/convertExternalToInternalMemberUser", body);
    expect(converted.status).toBe(200);
    const read = await call("GET", "/beta/users/u-1?$select=externalUserConvertedOn,externalUserState");
    expect(read.body.externalUserConvertedOn).toBeTypeOf("string");
    expect(read.body.externalUserState).toBeNull();
    // A beta-only property: v1.0 does not know it.
    expect((await call("GET", "/v1.0/users/u-1?$select=externalUserConvertedOn")).status).toBe(400);
  });

  it("refuses to invite an internal user whose mail is not the invited address, or a synced one, unless the rule is off", async () => {
    const body = {
      invitedUserEmailAddress: "lee@contoso.example",
      inviteRedirectUrl: "https://myapplications.microsoft.com",
      invitedUser: { id: "u-2" },
    };
    const noMail = await call("POST", "/v1.0/invitations", body);
    expect(noMail.status).toBe(400);
    expect(noMail.body.error.message).toContain("mail must be set to the invited external email address");
    tenant.state.users.put({
      ...tenant.state.users.get("u-2")!,
      mail: "lee@contoso.example",
      onPremisesUserPrincipalName: "lee@corp.contoso.example",
    });
    const synced = await call("POST", "/v1.0/invitations", body);
    expect(synced.status).toBe(400);
    expect(synced.body.error.message).toContain("Invalid request input");
    tenant.state.prerequisites = { ...tenant.state.prerequisites, invitationRefusesSyncedUsers: false };
    expect((await call("POST", "/v1.0/invitations", body)).status).toBe(201);
    expect(tenant.state.invitations.list()).toHaveLength(1);
  });

  it("refuses an invitation for an unknown user or without an email address", async () => {
    const body = { invitedUserEmailAddress: "x@contoso.example", inviteRedirectUrl: "https://example.com" };
    expect((await call("POST", "/v1.0/invitations", { ...body, invitedUser: { id: "nope" } })).status).toBe(
      404,
    );
    expect(
      (await call("POST", "/v1.0/invitations", { inviteRedirectUrl: "https://example.com" })).status,
    ).toBe(400);
  });

  it("converts an external user to internal on beta only", async () => {
    const body = {
      userPrincipalName: "sam@fabrikam.example",
      passwordProfile: { password: "Str0ng!Passw0rd", forceChangePasswordNextSignIn: true },
    };
    const onV1 = await call("POST", "/v1.0/users/u-guest/convertExternalToInternalMemberUser", body);
    expect(onV1.status).toBe(400);
    expect(onV1.body.error.message).toContain("convertExternalToInternalMemberUser");
    const withoutPassword = await call("POST", "/beta/users/u-guest/convertExternalToInternalMemberUser", {
      userPrincipalName: "sam@fabrikam.example",
    });
    expect(withoutPassword.status).toBe(400);

    const converted = await call("POST", "/beta/users/u-guest/convertExternalToInternalMemberUser", body);
    expect(converted.status).toBe(200);
    expect(converted.body).toMatchObject({ userPrincipalName: "sam@fabrikam.example", displayName: "Sam" });
    expect(converted.body.convertedToInternalUserDateTime).toBeTypeOf("string");
    const user = tenant.state.users.get("u-guest")!;
    expect(user).toMatchObject({ userType: "Member", externalUserState: null });
    expect(user.externalUserConvertedOn).toBeTypeOf("string");
    expect(user.identities).toEqual([expect.objectContaining({ signInType: "userPrincipalName" })]);

    const again = await call("POST", "/beta/users/u-guest/convertExternalToInternalMemberUser", body);
    expect(again.status).toBe(400);
  });
});

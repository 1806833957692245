import { expect } from "vitest";
import { MatoolkitError, type ReasonCode } from "@matoolkit/domain";
import type { TenantFixture } from "../contract/tenant-fixture.ts";
import { directoryObjectReference, groupPath, userPath } from "../../../src/functions/entra/graph-paths.ts";

/**
 * What the Entra contract suites create through Graph itself (never through the functions under
 * test), each registered for removal. Works against the simulator and a real tenant alike.
 */
export interface CreatedUser {
  readonly id: string;
  readonly userPrincipalName: string;
}

const password = "Contract!Test-2f9K7q";

export async function createUser(
  fixture: TenantFixture,
  properties: Record<string, unknown> = {},
): Promise<CreatedUser> {
  const nickname = fixture.uniqueName("entra");
  const user = await fixture.tenant.graph.request<CreatedUser>(
    {
      method: "POST",
      path: "/users",
      body: {
        accountEnabled: false,
        displayName: `Contract ${nickname}`,
        mailNickname: nickname,
        userPrincipalName: `${nickname}@${fixture.domain}`,
        passwordProfile: { password, forceChangePasswordNextSignIn: true },
        ...properties,
      },
    },
    signal(),
  );
  fixture.cleanup(() => deleteUser(fixture, user.id));
  return user;
}

/** A B2B guest created by invitation (no email sent), as the tenant's guests are. */
export async function createGuest(fixture: TenantFixture): Promise<CreatedUser> {
  const invitation = await fixture.tenant.graph.request<{ invitedUser: { id: string } }>(
    {
      method: "POST",
      path: "/invitations",
      body: {
        invitedUserEmailAddress: `${fixture.uniqueName("guest")}@example.com`,
        inviteRedirectUrl: "https://myapplications.microsoft.com",
        sendInvitationMessage: false,
      },
    },
    signal(),
  );
  const id = invitation.invitedUser.id;
  fixture.cleanup(() => deleteUser(fixture, id));
  const user = await fixture.eventually(() => readUser(fixture, id), "the invited guest to be readable");
  return { id, userPrincipalName: String(user.userPrincipalName) };
}

export async function createGroup(fixture: TenantFixture): Promise<string> {
  const nickname = fixture.uniqueName("entragrp");
  const group = await fixture.tenant.graph.request<{ id: string }>(
    {
      method: "POST",
      path: "/groups",
      body: {
        displayName: `Contract ${nickname}`,
        mailNickname: nickname,
        mailEnabled: false,
        securityEnabled: true,
      },
    },
    signal(),
  );
  fixture.cleanup(async () => {
    await fixture.tenant.graph.request({ method: "DELETE", path: groupPath(group.id) }, signal());
  });
  return group.id;
}

export async function addMember(fixture: TenantFixture, groupId: string, userId: string): Promise<void> {
  await fixture.tenant.graph.request(
    {
      method: "POST",
      path: groupPath(groupId, "/members/$ref"),
      body: directoryObjectReference(fixture.tenant.graph, userId),
    },
    signal(),
  );
}

/** Direct member ids of a group as reads show them now. */
export async function memberIds(fixture: TenantFixture, groupId: string): Promise<string[]> {
  const members = await fixture.tenant.graph.request<{ value: { id: string }[] }>(
    { method: "GET", path: groupPath(groupId, "/members"), query: { $select: "id" } },
    signal(),
  );
  return members.value.map((member) => member.id);
}

/** The user as reads show it now, or undefined while it is missing. */
export async function readUser(
  fixture: TenantFixture,
  idOrUpn: string,
  select = "id,userPrincipalName",
): Promise<Record<string, unknown> | undefined> {
  try {
    return await fixture.tenant.graph.request<Record<string, unknown>>(
      { method: "GET", path: userPath(idOrUpn), query: { $select: select } },
      signal(),
    );
  } catch (error) {
    if (error instanceof MatoolkitError && error.reason === "graph.not_found") return undefined;
    throw error;
  }
}

/** Removes a user the suite created, by id or UPN; already gone is fine. */
export async function deleteUser(fixture: TenantFixture, idOrUpn: string): Promise<void> {
  try {
    await fixture.tenant.graph.request({ method: "DELETE", path: userPath(idOrUpn) }, signal());
  } catch (error) {
    if (!(error instanceof MatoolkitError && error.reason === "graph.not_found")) throw error;
  }
}

/** The failure a function threw: its reason, retry policy, and what its message must not say. */
export async function expectFailure(
  promise: Promise<unknown>,
  expected: { reason: ReasonCode; names?: string; never?: readonly string[] },
): Promise<MatoolkitError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(MatoolkitError);
  const failure = error as MatoolkitError;
  expect(failure.reason).toBe(expected.reason);
  expect(failure.retriable).toBe(false);
  if (expected.names !== undefined) expect(failure.message).toContain(expected.names);
  for (const value of expected.never ?? []) expect(failure.message).not.toContain(value);
  return failure;
}

function signal(): AbortSignal {
  return AbortSignal.timeout(60_000);
}

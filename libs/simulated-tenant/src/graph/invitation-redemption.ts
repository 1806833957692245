import type { TenantState } from "../tenant-state.ts";

/**
 * What happens when an invited user opens the redeem link and signs in with their external
 * account: the invitation is completed, the user's `externalUserState` becomes `Accepted`, and
 * the user gains the external (federated) identity it authenticates with from then on. For an
 * internal user invited to B2B, only redemption turns the object into a B2B user: "When the user
 * accepts the invitation, the B2B service changes the existing internal user object to a B2B
 * user" (MicrosoftDocs/entra-docs docs/external-id/invite-internal-users.md). Graph has no API
 * for this step: "Currently, there's no API to perform the redemption process. The invited user
 * has to click on the inviteRedeemUrl link" (https://learn.microsoft.com/graph/api/resources/invitation),
 * so the simulator offers it as `POST /_simulator/invitations/redeem` for rehearsals and tests.
 * Redeems every pending invitation, or only those of `userId`; returns how many it redeemed.
 */
export function redeemInvitations(state: TenantState, userId?: string): number {
  const pending = state.invitations
    .list("primary")
    .filter(
      (invitation) =>
        invitation.status === "PendingAcceptance" &&
        (userId === undefined || invitation.invitedUserId === userId),
    );
  for (const invitation of pending) {
    state.invitations.put({ ...invitation, status: "Completed" });
    const user = state.users.get(invitation.invitedUserId, "primary");
    if (user === undefined || user.externalUserState !== "PendingAcceptance") continue;
    const federated = user.identities.some((identity) => identity.signInType === "federated");
    state.users.put({
      ...user,
      externalUserState: "Accepted",
      identities: federated
        ? user.identities
        : [
            ...user.identities,
            { signInType: "federated", issuer: "ExternalAzureAD", issuerAssignedId: null },
          ],
    });
    state.recordChange({
      api: "graph",
      operation: "redeem invitation (simulated user)",
      target: user.userPrincipalName,
      detail: "externalUserState=Accepted",
    });
  }
  return pending.length;
}

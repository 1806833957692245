import { NonRetriableError, reasonCodes } from "@matoolkit/domain";
import type { GraphUser } from "./resolve-directory-object.ts";

/**
 * What "Invite internal users to B2B collaboration" (https://learn.microsoft.com/entra/external-id/invite-internal-users,
 * MicrosoftDocs/entra-docs docs/external-id/invite-internal-users.md) requires of the user before
 * the invitation, checked before Graph is called so the operator gets a reason, not a 400:
 * - not synced with onPremisesUserPrincipalName: "we block internal-to-external conversions for
 *   user objects with this attribute" (Entra Connect Sync's default rule writes it);
 * - `mail` set to the external address: "Before you invite the user, make sure the User.Mail
 *   property of the internal user object ... is set to the external email address they'll use for
 *   B2B collaboration".
 * Messages name the attributes, never their values (member PII).
 */
export const invitationPrerequisiteProperties = ["mail", "onPremisesUserPrincipalName"] as const;

export function hasExternalMail(user: GraphUser, invitedAddress: string): boolean {
  return typeof user.mail === "string" && user.mail.toLowerCase() === invitedAddress.toLowerCase();
}

export function isSyncedWithOnPremisesUpn(user: GraphUser): boolean {
  return typeof user.onPremisesUserPrincipalName === "string" && user.onPremisesUserPrincipalName !== "";
}

export function assertInvitable(functionName: string, user: GraphUser, invitedAddress: string): void {
  if (isSyncedWithOnPremisesUpn(user)) {
    throw new NonRetriableError(
      reasonCodes.entraInvitationSyncedUser,
      `${functionName}: the user is synced from on-premises (onPremisesUserPrincipalName is set), and Entra ID refuses to invite such users to B2B collaboration; stop the sync rule writing onPremisesUserPrincipalName first`,
    );
  }
  if (!hasExternalMail(user, invitedAddress)) {
    throw new NonRetriableError(
      reasonCodes.entraInvitationMailMismatch,
      `${functionName}: the user's mail is not InvitedUserEmailAddress; set mail to the external address before inviting the user to B2B collaboration (in Exchange if the user has a mailbox)`,
    );
  }
}

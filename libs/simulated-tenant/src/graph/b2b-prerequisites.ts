import type { DirectoryUser } from "../model.ts";
import type { TenantState } from "../tenant-state.ts";

/**
 * Why Entra refuses to invite an existing internal user to B2B collaboration, or undefined.
 * Source: "Invite internal users to B2B collaboration"
 * (https://learn.microsoft.com/entra/external-id/invite-internal-users, MicrosoftDocs/entra-docs
 * docs/external-id/invite-internal-users.md):
 * - `invitationRefusesSyncedUsers`: "we block internal-to-external conversions for user objects
 *   with this attribute" (onPremisesUserPrincipalName, written by Entra Connect Sync's default
 *   rule). The admin center answers "User invitation failed. Invalid request input."
 *   (MicrosoftDocs/azure-docs issue #107086); the API's error body is not documented.
 * - `invitationRequiresExternalMail`: "Before you invite the user, make sure the User.Mail
 *   property of the internal user object ... is set to the external email address they'll use for
 *   B2B collaboration"; the admin center refuses a user whose mail is in a verified domain with
 *   "User's email address cannot be in a verified domain. Please change the user's email to enable
 *   conversion to a B2B user." (MicrosoftDocs/azure-docs issue #76227). The documentation gives no
 *   API error for a mismatch: the simulator refuses it (stricter than documented), as a mail that
 *   is not the invited address breaks sign-in for some services ("the account they're using must
 *   match the domain in the User.Mail property").
 * Both answered 400 Request_BadRequest with that text (the real API's code is not documented).
 */
export function invitationRefusal(
  state: TenantState,
  user: DirectoryUser,
  invitedUserEmailAddress: string,
): string | undefined {
  const rules = state.prerequisites;
  if (rules.invitationRefusesSyncedUsers && user.onPremisesUserPrincipalName !== null) {
    return "User invitation failed. Invalid request input. Users with onPremisesUserPrincipalName can't be invited to B2B collaboration.";
  }
  if (
    rules.invitationRequiresExternalMail &&
    (user.mail === null || user.mail.toLowerCase() !== invitedUserEmailAddress.toLowerCase())
  ) {
    return "The user's mail must be set to the invited external email address before the user is invited to B2B collaboration.";
  }
  return undefined;
}

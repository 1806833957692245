import { safeToRepeat, type FunctionModule } from "../worker-function.ts";
import { addEntraGroupMember } from "./add-entra-group-member.ts";
import { convertEntraB2BToInternal } from "./convert-entra-b2b-to-internal.ts";
import { entraSettings, type EntraFunctionOptions } from "./entra-options.ts";
import { newEntraB2BInvitation } from "./new-entra-b2b-invitation.ts";
import { newEntraUser } from "./new-entra-user.ts";
import { RecentInvitations } from "./recent-invitations.ts";
import { removeEntraGroupMember } from "./remove-entra-group-member.ts";
import { setEntraUserUpn } from "./set-entra-user-upn.ts";
import { testEntraAttributeMatch } from "./test-entra-attribute-match.ts";
import { testEntraGroupMembership } from "./test-entra-group-membership.ts";

export type { EntraFunctionOptions } from "./entra-options.ts";

/**
 * The Entra half of the standard library: Microsoft Graph functions, each check-then-act
 * idempotent so a retried or redelivered job does no harm. One instance per worker process (the
 * invitation guard lives in it).
 */
export function createEntraFunctions(options: EntraFunctionOptions = {}): FunctionModule {
  const settings = entraSettings(options);
  // Ten minutes, or the grace if longer: past it, reads show an invitation without help.
  const recentInvitations = new RecentInvitations(Math.max(600_000, settings.replicationGraceMs));
  // Safe to repeat after a cut-off run: the reads and the writes of a value or a membership. Not:
  // New-EntraUser (a create whose first run may not read back yet), New-EntraB2BInvitation (sends
  // an email), Convert-EntraB2BToInternal (beta API, may set a generated password).
  return {
    "New-EntraUser": newEntraUser(settings),
    "Set-EntraUserUPN": safeToRepeat(setEntraUserUpn(settings)),
    "Add-EntraGroupMember": safeToRepeat(addEntraGroupMember(settings)),
    "Remove-EntraGroupMember": safeToRepeat(removeEntraGroupMember(settings)),
    "New-EntraB2BInvitation": newEntraB2BInvitation(settings, recentInvitations),
    "Convert-EntraB2BToInternal": convertEntraB2BToInternal(settings),
    "Test-EntraAttributeMatch": safeToRepeat(testEntraAttributeMatch(settings)),
    "Test-EntraGroupMembership": safeToRepeat(testEntraGroupMembership(settings)),
  };
}

import type { FunctionModule } from "../worker-function.ts";
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
  return {
    "New-EntraUser": newEntraUser(settings),
    "Set-EntraUserUPN": setEntraUserUpn(settings),
    "Add-EntraGroupMember": addEntraGroupMember(settings),
    "Remove-EntraGroupMember": removeEntraGroupMember(settings),
    "New-EntraB2BInvitation": newEntraB2BInvitation(settings, recentInvitations),
    "Convert-EntraB2BToInternal": convertEntraB2BToInternal(settings),
    "Test-EntraAttributeMatch": testEntraAttributeMatch(settings),
    "Test-EntraGroupMembership": testEntraGroupMembership(settings),
  };
}

import type { DirectoryGroup } from "../model.ts";
import type { TenantState } from "../tenant-state.ts";

/**
 * Graph manages the membership of security groups and Microsoft 365 groups only: mail-enabled
 * security groups and distribution lists are read-only there and are managed in Exchange Online
 * (Add-/Remove-DistributionGroupMember). The groups overview's table marks both "No (read-only)"
 * under "Manage via Microsoft Graph" (https://learn.microsoft.com/graph/api/resources/groups-overview),
 * and adding a member answers 400 Request_BadRequest "Cannot Update a mail-enabled security groups
 * and or distribution list." (body captured in microsoftgraph/microsoft-graph-docs issue #14827,
 * 2021-11-03; the same text in KelvinTegelaar/CIPP issue #1607). Behaviour
 * `mailEnabledGroupMembership` (default `refused`).
 */
export const mailEnabledGroupMessage =
  "Cannot Update a mail-enabled security groups and or distribution list.";

/** A mail-enabled group that is not a Microsoft 365 group (`groupTypes` without `Unified`). */
export function membershipManagedByExchange(state: TenantState, group: DirectoryGroup): boolean {
  return (
    state.behaviours.mailEnabledGroupMembership === "refused" &&
    group.mailEnabled &&
    !group.groupTypes.includes("Unified")
  );
}

/**
 * Creating one is refused the same way: Graph creates Microsoft 365 groups (`groupTypes: ["Unified"]`)
 * and security groups only (https://learn.microsoft.com/graph/api/group-post-groups, "You can create
 * the following types of groups"; the overview's table: mail-enabled security groups and
 * distribution groups are created in Exchange Online, New-DistributionGroup). The body answered,
 * 400 Request_BadRequest "Cannot Create a mail-enabled security groups and or distribution list.",
 * is quoted in pnp/cli-microsoft365 issue #5476. Same behaviour switch as membership.
 */
export const mailEnabledGroupCreateMessage =
  "Cannot Create a mail-enabled security groups and or distribution list.";

/** A create request for a group Graph does not create: mail-enabled and not a Microsoft 365 group. */
export function creationManagedByExchange(
  state: TenantState,
  input: { readonly mailEnabled: boolean; readonly groupTypes?: readonly string[] | undefined },
): boolean {
  return (
    state.behaviours.mailEnabledGroupMembership === "refused" &&
    input.mailEnabled &&
    !(input.groupTypes ?? []).includes("Unified")
  );
}

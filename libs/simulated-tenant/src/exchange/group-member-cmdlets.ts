import type { ExchangeRecipient } from "../model.ts";
import type { TenantState } from "../tenant-state.ts";
import { CmdletError, exceptionTypes } from "./cmdlet-error.ts";
import type { BoundParameters, CmdletDefinition, CmdletOutput } from "./cmdlet.ts";
import { parametersOf } from "./exchange-online-parameters.ts";
import { recipientOutput, resolveRecipient } from "./recipient-lookup.ts";

/**
 * Get-, Add- and Remove-DistributionGroupMember. Exchange keeps the member links on the group
 * (`Members`: recipient Guids); the mail-enabled Entra group created alongside is kept in step so
 * Graph reads of the same tenant agree. Listing reads the replica, changes resolve on the primary.
 */
export const groupMemberCmdlets: readonly CmdletDefinition[] = [
  {
    name: "Get-DistributionGroupMember",
    parameters: parametersOf("Get-DistributionGroupMember"),
    run: (parameters, state) => {
      const group = resolveRecipient(state, parameters.Identity as string, "distributionGroup", "replica");
      const limit = (parameters.ResultSize as number | undefined) ?? 1000;
      const members = group.Members.map((guid) => state.recipients.get(guid)).filter(
        (member): member is ExchangeRecipient => member !== undefined,
      );
      return { value: members.slice(0, limit).map(recipientOutput) };
    },
  },
  {
    name: "Add-DistributionGroupMember",
    parameters: parametersOf("Add-DistributionGroupMember"),
    run: (parameters, state) => changeMembership(parameters, state, "add"),
  },
  {
    name: "Remove-DistributionGroupMember",
    parameters: parametersOf("Remove-DistributionGroupMember"),
    run: (parameters, state) => changeMembership(parameters, state, "remove"),
  },
];

function changeMembership(
  parameters: BoundParameters,
  state: TenantState,
  change: "add" | "remove",
): CmdletOutput {
  const group = resolveRecipient(state, parameters.Identity as string, "distributionGroup", "primary");
  const member = resolveRecipient(state, parameters.Member as string, "any", "primary");
  const isMember = group.Members.includes(member.Guid);
  if (change === "add" && isMember) {
    throw new CmdletError(
      400,
      exceptionTypes.memberAlreadyExists,
      `The recipient "${member.Name}" is already a member of the group "${group.Name}".`,
    );
  }
  if (change === "remove" && !isMember) {
    throw new CmdletError(
      400,
      exceptionTypes.memberNotFound,
      `The recipient "${member.Name}" isn't a member of the group "${group.Name}".`,
    );
  }
  const members =
    change === "add" ? [...group.Members, member.Guid] : group.Members.filter((guid) => guid !== member.Guid);
  state.recipients.put({ ...group, Members: members });
  syncEntraGroup(state, group, member, change);
  const operation = change === "add" ? "Add-DistributionGroupMember" : "Remove-DistributionGroupMember";
  state.recordChange({ api: "exchange", operation, target: group.Name, detail: `Member=${member.Name}` });
  return { value: [] };
}

function syncEntraGroup(
  state: TenantState,
  group: ExchangeRecipient,
  member: ExchangeRecipient,
  change: "add" | "remove",
): void {
  const entra =
    group.ExternalDirectoryObjectId === null
      ? undefined
      : state.groups.get(group.ExternalDirectoryObjectId, "primary");
  const memberId = member.ExternalDirectoryObjectId;
  if (entra === undefined || memberId === null) return;
  const members = entra.members.filter((id) => id !== memberId);
  state.groups.put({ ...entra, members: change === "add" ? [...members, memberId] : members });
}

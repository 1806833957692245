import type { DirectoryGroup, ExchangeRecipient } from "../model.ts";
import type { TenantState } from "../tenant-state.ts";
import { invalidValue } from "./cmdlet-error.ts";
import type { BoundParameters, CmdletDefinition, CmdletOutput } from "./cmdlet.ts";
import { parametersOf } from "./exchange-online-parameters.ts";
import type { MultiValue } from "./parameter-binding.ts";
import { bareSmtp, looksLikeSmtp } from "./proxy-addresses.ts";
import { read } from "./read-recipient-cmdlets.ts";
import { recipientOutput, resolveRecipient } from "./recipient-lookup.ts";
import { assertUniqueAddresses } from "./recipient-updates.ts";
import { assertNameFree, removeRecipient, zeroGuid } from "./mail-user-cmdlets.ts";

/**
 * New-, Get- and Remove-DistributionGroup. As in Exchange Online, a distribution group comes with
 * a mail-enabled Entra group (its ExternalDirectoryObjectId), created and removed with it; members
 * are handled in group-member-cmdlets.ts.
 */
export const distributionGroupCmdlets: readonly CmdletDefinition[] = [
  {
    name: "New-DistributionGroup",
    parameters: parametersOf("New-DistributionGroup"),
    run: newGroup,
  },
  {
    name: "Get-DistributionGroup",
    parameters: parametersOf("Get-DistributionGroup"),
    run: (parameters, state) => read(parameters, state, "distributionGroup"),
  },
  {
    name: "Remove-DistributionGroup",
    parameters: parametersOf("Remove-DistributionGroup"),
    run: (parameters, state) => {
      const group = resolveRecipient(state, parameters.Identity as string, "distributionGroup", "primary");
      removeRecipient(state, group, "Remove-DistributionGroup");
      if (group.ExternalDirectoryObjectId !== null) state.groups.delete(group.ExternalDirectoryObjectId);
      return { value: [] };
    },
  },
];

function newGroup(parameters: BoundParameters, state: TenantState): CmdletOutput {
  const name = parameters.Name as string;
  const type = ((parameters.Type as string | undefined) ?? "Distribution").toLowerCase();
  if (type !== "distribution" && type !== "security")
    throw invalidValue("Type must be Distribution or Security.");
  const alias = (parameters.Alias as string | undefined) ?? name.replace(/[^A-Za-z0-9._-]/g, "");
  const primary = bareSmtp(
    (parameters.PrimarySmtpAddress as string | undefined) ?? `${alias}@${state.domains[0]}`,
  );
  if (!looksLikeSmtp(primary)) throw invalidValue("PrimarySmtpAddress is not a valid SMTP address.");
  assertNameFree(state, name);
  const members = (
    (parameters.Members as MultiValue | undefined)?.mode === "replace"
      ? (parameters.Members as { values: readonly string[] }).values
      : []
  ).map((member) => resolveRecipient(state, member, "any", "primary"));
  const guid = state.newId();
  const groupId = state.newId();
  const group: ExchangeRecipient = {
    Guid: guid,
    Identity: name,
    Name: name,
    Alias: alias,
    DisplayName: (parameters.DisplayName as string | undefined) ?? name,
    RecipientTypeDetails:
      type === "security" ? "MailUniversalSecurityGroup" : "MailUniversalDistributionGroup",
    PrimarySmtpAddress: primary,
    WindowsEmailAddress: primary,
    EmailAddresses: [`SMTP:${primary}`],
    ExternalEmailAddress: null,
    ExchangeGuid: zeroGuid,
    ArchiveGuid: zeroGuid,
    LegacyExchangeDN: `/o=ExchangeLabs/ou=Exchange Administrative Group (FYDIBOHF23SPDLT)/cn=Recipients/cn=${guid.replace(/-/g, "")}-${alias}`,
    ExternalDirectoryObjectId: groupId,
    EmailAddressPolicyEnabled: false,
    PreviousRecipientTypeDetails: null,
    Members: members.map((member) => member.Guid),
  };
  assertUniqueAddresses(state, undefined, group);
  state.recipients.put(group);
  const entraGroup: DirectoryGroup = {
    id: groupId,
    displayName: group.DisplayName,
    mailNickname: alias,
    mail: primary,
    description: null,
    groupTypes: [],
    securityEnabled: type === "security",
    mailEnabled: true,
    members: members.flatMap((member) =>
      member.ExternalDirectoryObjectId === null ? [] : [member.ExternalDirectoryObjectId],
    ),
  };
  state.groups.put(entraGroup);
  state.recordChange({
    api: "exchange",
    operation: "New-DistributionGroup",
    target: name,
    detail: `PrimarySmtpAddress=${primary}`,
  });
  return { value: [recipientOutput(group)] };
}

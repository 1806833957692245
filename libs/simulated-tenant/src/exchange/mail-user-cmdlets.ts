import type { ExchangeRecipient } from "../model.ts";
import { newDirectoryUser } from "../directory-user.ts";
import type { TenantState } from "../tenant-state.ts";
import { CmdletError, exceptionTypes, invalidValue } from "./cmdlet-error.ts";
import type { BoundParameters, CmdletDefinition, CmdletOutput } from "./cmdlet.ts";
import { parametersOf } from "./exchange-online-parameters.ts";
import { bareSmtp, looksLikeSmtp } from "./proxy-addresses.ts";
import { recipientOutput, resolveRecipient } from "./recipient-lookup.ts";
import { assertUniqueAddresses } from "./recipient-updates.ts";

export const zeroGuid = "00000000-0000-0000-0000-000000000000";

/**
 * New-MailUser / Remove-MailUser. As in Exchange Online, a mail user is backed by an Entra user
 * (created disabled here, removed with it), gets a Guid, an ExternalDirectoryObjectId and a
 * LegacyExchangeDN, and has zero ExchangeGuid / ArchiveGuid until a migration sets them.
 */
export const mailUserCmdlets: readonly CmdletDefinition[] = [
  {
    name: "New-MailUser",
    parameters: parametersOf("New-MailUser"),
    run: newMailUser,
  },
  {
    name: "Remove-MailUser",
    parameters: parametersOf("Remove-MailUser"),
    run: removeMailUser,
  },
];

function newMailUser(parameters: BoundParameters, state: TenantState): CmdletOutput {
  const name = parameters.Name as string;
  const alias = (parameters.Alias as string | undefined) ?? name.replace(/[^A-Za-z0-9._-]/g, "");
  const primary = bareSmtp(
    (parameters.PrimarySmtpAddress as string | undefined) ?? `${alias}@${state.domains[0]}`,
  );
  const external = bareSmtp(parameters.ExternalEmailAddress as string);
  if (!looksLikeSmtp(primary) || !looksLikeSmtp(external))
    throw invalidValue("An email address is not a valid SMTP address.");
  assertNameFree(state, name);
  const userId = state.newId();
  const guid = state.newId();
  const recipient: ExchangeRecipient = {
    Guid: guid,
    Identity: name,
    Name: name,
    Alias: alias,
    DisplayName: (parameters.DisplayName as string | undefined) ?? name,
    RecipientTypeDetails: "MailUser",
    PrimarySmtpAddress: primary,
    WindowsEmailAddress: primary,
    EmailAddresses: [`SMTP:${primary}`],
    ExternalEmailAddress: `SMTP:${external}`,
    ExchangeGuid: zeroGuid,
    ArchiveGuid: zeroGuid,
    LegacyExchangeDN: `/o=ExchangeLabs/ou=Exchange Administrative Group (FYDIBOHF23SPDLT)/cn=Recipients/cn=${guid.replace(/-/g, "")}-${alias}`,
    ExternalDirectoryObjectId: userId,
    EmailAddressPolicyEnabled: false,
    PreviousRecipientTypeDetails: null,
    Members: [],
  };
  assertUniqueAddresses(state, undefined, recipient);
  // Exchange Online creates the linked Entra user, disabled until a password is set.
  const user = newDirectoryUser(state, {
    id: userId,
    userPrincipalName: primary,
    displayName: recipient.DisplayName,
    mailNickname: alias,
    mail: primary,
    givenName: (parameters.FirstName as string | undefined) ?? null,
    surname: (parameters.LastName as string | undefined) ?? null,
    accountEnabled: false,
    proxyAddresses: [`SMTP:${primary}`],
  });
  state.users.put(user);
  state.recipients.put(recipient);
  state.recordChange({
    api: "exchange",
    operation: "New-MailUser",
    target: name,
    detail: `PrimarySmtpAddress=${primary}`,
  });
  return { value: [recipientOutput(recipient)] };
}

function removeMailUser(parameters: BoundParameters, state: TenantState): CmdletOutput {
  const recipient = resolveRecipient(state, parameters.Identity as string, "mailUser", "primary");
  removeRecipient(state, recipient, "Remove-MailUser");
  if (recipient.ExternalDirectoryObjectId !== null) state.users.delete(recipient.ExternalDirectoryObjectId);
  return { value: [] };
}

/** Deletes a recipient and the group links to it (the directory drops back-links with the object). */
export function removeRecipient(state: TenantState, recipient: ExchangeRecipient, cmdlet: string): void {
  for (const group of state.recipients.list("primary")) {
    if (group.Members.includes(recipient.Guid)) {
      state.recipients.put({
        ...group,
        Members: group.Members.filter((member) => member !== recipient.Guid),
      });
    }
  }
  state.recipients.delete(recipient.Guid);
  state.recordChange({ api: "exchange", operation: cmdlet, target: recipient.Name, detail: "removed" });
}

export function assertNameFree(state: TenantState, name: string): void {
  const taken = state.recipients.find(
    (recipient) => recipient.Name.toLowerCase() === name.toLowerCase(),
    "primary",
  );
  if (taken !== undefined) {
    throw new CmdletError(
      400,
      exceptionTypes.alreadyExists,
      `The name "${name}" is already being used. Please try another name.`,
    );
  }
}

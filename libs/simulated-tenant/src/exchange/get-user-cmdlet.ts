import type { ExchangeRecipient } from "../model.ts";
import type { TenantState } from "../tenant-state.ts";
import { objectNotFound } from "./cmdlet-error.ts";
import type { BoundParameters, CmdletDefinition, CmdletOutput } from "./cmdlet.ts";
import { parametersOf } from "./exchange-online-parameters.ts";
import { familyOf, listRecipients, resolveRecipient } from "./recipient-lookup.ts";

/**
 * Get-User: the user objects behind mailboxes and mail users, read from the replica view. It is
 * where Exchange shows whether a mail user once had a mailbox: "Find objects that were previously
 * mailboxes using this command. `Get-User <identity> | select Name, *recipient*`", whose example
 * output has the columns PreviousRecipientTypeDetails (`UserMailbox`), RecipientType and
 * RecipientTypeDetails (`MailUser`) ("Cross-tenant mailbox migration", Prerequisites for target
 * user objects, item 5, MicrosoftDocs/microsoft-365-docs microsoft-365/enterprise/cross-tenant-mailbox-migration.md).
 * Groups are not users: Get-User on one is "not found", as the real cmdlet answers.
 */
export const getUserCmdlet: CmdletDefinition = {
  name: "Get-User",
  parameters: parametersOf("Get-User"),
  run: getUser,
};

function getUser(parameters: BoundParameters, state: TenantState): CmdletOutput {
  const identity = parameters.Identity as string | undefined;
  if (identity !== undefined) {
    const recipient = resolveRecipient(state, identity, "any", "replica");
    if (!isUser(recipient)) throw objectNotFound(identity);
    return { value: [userOutput(state, recipient)] };
  }
  const limit = (parameters.ResultSize as number | undefined) ?? 1000;
  const users = listRecipients(state, "any", "replica").filter(isUser);
  return { value: users.slice(0, limit).map((recipient) => userOutput(state, recipient)) };
}

function isUser(recipient: ExchangeRecipient): boolean {
  const family = familyOf(recipient.RecipientTypeDetails);
  return family === "mailbox" || family === "mailUser";
}

function userOutput(state: TenantState, recipient: ExchangeRecipient): Record<string, unknown> {
  const user =
    recipient.ExternalDirectoryObjectId === null
      ? undefined
      : state.users.get(recipient.ExternalDirectoryObjectId, "replica");
  return {
    Guid: recipient.Guid,
    Identity: recipient.Identity,
    Name: recipient.Name,
    DisplayName: recipient.DisplayName,
    UserPrincipalName: user?.userPrincipalName ?? null,
    ExternalDirectoryObjectId: recipient.ExternalDirectoryObjectId,
    RecipientType: familyOf(recipient.RecipientTypeDetails) === "mailbox" ? "UserMailbox" : "MailUser",
    RecipientTypeDetails: recipient.RecipientTypeDetails,
    PreviousRecipientTypeDetails: recipient.PreviousRecipientTypeDetails ?? "None",
  };
}

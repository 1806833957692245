import type { ReadView } from "../replicated-collection.ts";
import type { ExchangeRecipient, RecipientTypeDetails } from "../model.ts";
import type { TenantState } from "../tenant-state.ts";
import { CmdletError, exceptionTypes, objectNotFound } from "./cmdlet-error.ts";

/** The recipient families the cmdlets are restricted to (Get-Mailbox sees only mailboxes…). */
export type RecipientFamily = "mailbox" | "mailUser" | "distributionGroup" | "any";

export function familyOf(type: RecipientTypeDetails): Exclude<RecipientFamily, "any"> | "groupMailbox" {
  switch (type) {
    case "UserMailbox":
    case "SharedMailbox":
      return "mailbox";
    case "MailUser":
      return "mailUser";
    case "MailUniversalDistributionGroup":
    case "MailUniversalSecurityGroup":
      return "distributionGroup";
    case "GroupMailbox":
      return "groupMailbox";
    default: {
      const unreachable: never = type;
      throw new Error(`Unknown recipient type ${String(unreachable)}`);
    }
  }
}

function inFamily(recipient: ExchangeRecipient, family: RecipientFamily): boolean {
  return family === "any" || familyOf(recipient.RecipientTypeDetails) === family;
}

/** Exchange's `-Identity`: Guid, ExternalDirectoryObjectId, Identity, Name, Alias or an SMTP address. */
export function matchesIdentity(recipient: ExchangeRecipient, identity: string): boolean {
  const wanted = identity.toLowerCase();
  const names = [
    recipient.Guid,
    recipient.ExternalDirectoryObjectId,
    recipient.Identity,
    recipient.Name,
    recipient.Alias,
  ];
  if (names.some((value) => value !== null && value.toLowerCase() === wanted)) return true;
  return recipient.EmailAddresses.some((address) => address.toLowerCase() === `smtp:${wanted}`);
}

/** Exchange Online also resolves a user-based recipient by its Entra user's UPN. */
function matchesUpn(
  state: TenantState,
  recipient: ExchangeRecipient,
  identity: string,
  view: ReadView,
): boolean {
  if (recipient.ExternalDirectoryObjectId === null || !identity.includes("@")) return false;
  const user = state.users.get(recipient.ExternalDirectoryObjectId, view);
  return user !== undefined && user.userPrincipalName.toLowerCase() === identity.toLowerCase();
}

/**
 * Resolves `-Identity` within a family, as the real cmdlets do: a recipient of another family is
 * "not found" (Get-MailUser on a mailbox), two matches are ambiguous. Reads use the replica view,
 * writes resolve on the primary.
 */
export function resolveRecipient(
  state: TenantState,
  identity: string,
  family: RecipientFamily,
  view: ReadView,
): ExchangeRecipient {
  const matches = state.recipients
    .list(view)
    .filter(
      (recipient) =>
        inFamily(recipient, family) &&
        (matchesIdentity(recipient, identity) || matchesUpn(state, recipient, identity, view)),
    );
  if (matches.length === 0) throw objectNotFound(identity);
  if (matches.length > 1) {
    throw new CmdletError(
      400,
      exceptionTypes.ambiguous,
      `The operation couldn't be performed because '${identity}' matches multiple entries.`,
    );
  }
  return matches[0]!;
}

/** Every recipient of a family, in creation order (what Get-* without -Identity lists). */
export function listRecipients(
  state: TenantState,
  family: RecipientFamily,
  view: ReadView,
): ExchangeRecipient[] {
  return state.recipients.list(view).filter((recipient) => inFamily(recipient, family));
}

/**
 * Get-* output: the stored recipient without the simulator's membership links, and without
 * PreviousRecipientTypeDetails, which only Get-User shows (get-user-cmdlet.ts).
 */
export function recipientOutput(recipient: ExchangeRecipient): Record<string, unknown> {
  const { Members: _members, PreviousRecipientTypeDetails: _previous, ...rest } = recipient;
  const family = familyOf(recipient.RecipientTypeDetails);
  const recipientType =
    family === "mailbox"
      ? "UserMailbox"
      : family === "groupMailbox"
        ? "MailUniversalDistributionGroup"
        : recipient.RecipientTypeDetails;
  return { ...rest, RecipientType: recipientType };
}

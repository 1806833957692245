import { randomUUID } from "node:crypto";
import type { ExchangeRecipient } from "../model.ts";
import type { TenantState } from "../tenant-state.ts";

const zeroGuid = "00000000-0000-0000-0000-000000000000";

/** An enabled (or in-grace) `exchange` service plan: what provisions a mailbox. */
export function hasExchangeLicense(state: TenantState, recipient: ExchangeRecipient): boolean {
  if (recipient.ExternalDirectoryObjectId === null) return false;
  const user = state.users.get(recipient.ExternalDirectoryObjectId, "primary");
  return (
    user?.assignedPlans.some(
      (plan) =>
        plan.service.toLowerCase() === "exchange" &&
        (plan.capabilityStatus === "Enabled" || plan.capabilityStatus === "Warning"),
    ) ?? false
  );
}

/**
 * "Applying a license before the ExchangeGUID is applied will result in a new mailbox provisioned
 * in target organization." (Prerequisites for target user objects, item 4, "Cross-tenant mailbox
 * migration", MicrosoftDocs/microsoft-365-docs microsoft-365/enterprise/cross-tenant-mailbox-migration.md).
 * Rule `exchangeLicenseProvisionsMailbox` (default on): a MailUser whose Entra user holds an
 * Exchange Online plan and whose ExchangeGuid is still zero is a UserMailbox with a new
 * ExchangeGuid, as Exchange leaves it minutes after the license. Off: the MailUser stays as it is,
 * the window before Exchange provisions the mailbox. Licenses are only seeded (no license API is
 * simulated), so this runs when a seed is applied. Mutates `recipient`.
 */
export function provisionLicensedMailUser(state: TenantState, recipient: ExchangeRecipient): void {
  if (!state.prerequisites.exchangeLicenseProvisionsMailbox) return;
  if (recipient.RecipientTypeDetails !== "MailUser" || recipient.ExchangeGuid !== zeroGuid) return;
  if (!hasExchangeLicense(state, recipient)) return;
  recipient.RecipientTypeDetails = "UserMailbox";
  recipient.ExchangeGuid = randomUUID();
  recipient.ExternalEmailAddress = null;
}

import { NonRetriableError, reasonCodes } from "@matoolkit/domain";
import type { TenantClients } from "../../tenant/tenant-clients.ts";
import { isNotFound } from "../entra/resolve-directory-object.ts";
import { userPath } from "../entra/graph-paths.ts";
import { kindOf, type ResolvedRecipient } from "./get-recipient.ts";

/**
 * The target-object rules of "Cross-tenant mailbox migration", Prerequisites for target user
 * objects (https://learn.microsoft.com/microsoft-365/enterprise/cross-tenant-mailbox-migration,
 * MicrosoftDocs/microsoft-365-docs microsoft-365/enterprise/cross-tenant-mailbox-migration.md),
 * checked before the GUIDs are stamped. Messages name the rule, never the recipient's values.
 */

/**
 * Item 4: "You may apply a license in advance of a mailbox move but ONLY once the target MailUser
 * is properly set up with ExchangeGUID and proxy addresses. Applying a license before the
 * ExchangeGUID is applied will result in a new mailbox provisioned in target organization."
 * A license is an Exchange Online service plan in the Entra user's `assignedPlans` (`service`
 * "exchange", `capabilityStatus` Enabled or Warning, the states "available for normal use":
 * https://learn.microsoft.com/graph/api/resources/assignedplan). Not checked once the requested
 * ExchangeGuid is already stamped: licensing then is the documented order.
 */
export async function refuseLicensedBeforeGuids(
  tenant: TenantClients,
  functionName: string,
  recipient: ResolvedRecipient,
  signal: AbortSignal,
): Promise<void> {
  const userId = recipient.properties.ExternalDirectoryObjectId;
  if (typeof userId !== "string" || userId === "") return;
  let user: { assignedPlans?: unknown };
  try {
    user = await tenant.graph.request<{ assignedPlans?: unknown }>(
      { method: "GET", path: userPath(userId), query: { $select: "id,assignedPlans" } },
      signal,
    );
  } catch (error) {
    // A mail user created a moment ago may not be readable in Graph yet: it has no license then.
    if (isNotFound(error)) return;
    throw error;
  }
  const plans = Array.isArray(user.assignedPlans) ? (user.assignedPlans as Record<string, unknown>[]) : [];
  const exchange = plans.some(
    (plan) =>
      String(plan.service).toLowerCase() === "exchange" &&
      ["enabled", "warning"].includes(String(plan.capabilityStatus).toLowerCase()),
  );
  if (exchange) {
    throw new NonRetriableError(
      reasonCodes.exchangeLicensedBeforeGuids,
      `${functionName}: the target already holds an Exchange Online license; a license before the ExchangeGuid provisions a new mailbox: remove it, stamp the GUIDs, then license`,
    );
  }
}

/**
 * Item 5: "You must ensure that the target MailUser has no previous ExchangeGuid that does not
 * match the Source ExchangeGuid. This might occur if the target MEU was previously licensed for
 * Exchange Online and provisioned a mailbox", found with `Get-User <identity> | select Name,
 * *recipient*` (PreviousRecipientTypeDetails UserMailbox) and cleaned with `Set-User
 * -PermanentlyClearPreviousMailboxInfo`. A target that is a mailbox now fails the same rule.
 */
export async function refuseFormerMailbox(
  tenant: TenantClients,
  functionName: string,
  recipient: ResolvedRecipient,
  signal: AbortSignal,
): Promise<void> {
  if (recipient.kind === "mailbox") {
    throw new NonRetriableError(
      reasonCodes.exchangeTargetHadMailbox,
      `${functionName}: the recipient is a ${typeName(recipient.recipientTypeDetails)}, not a MailUser that never had a mailbox, which a cross-tenant mailbox move needs`,
    );
  }
  if (recipient.kind !== "mailUser") return;
  const { value } = await tenant.exchange.invoke("Get-User", { Identity: recipient.guid }, signal);
  const previous = String(value[0]?.PreviousRecipientTypeDetails ?? "None");
  if (kindOf(previous) === "mailbox") {
    throw new NonRetriableError(
      reasonCodes.exchangeTargetHadMailbox,
      `${functionName}: the mail user had a mailbox before (Get-User PreviousRecipientTypeDetails ${typeName(previous)}); clear it with Set-User -PermanentlyClearPreviousMailboxInfo before stamping the GUIDs`,
    );
  }
}

/** RecipientTypeDetails is an enum name; anything else is not repeated into a message. */
function typeName(value: string): string {
  return /^\w{1,60}$/.test(value) ? value : "recipient of another type";
}

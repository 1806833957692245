import { NonRetriableError, reasonCodes } from "@matoolkit/domain";
import type { ExchangeClient } from "../../tenant/exchange-client.ts";
import { exchangeErrorOf } from "../../tenant/exchange-error-mapping.ts";
import { withPatience, defaultLookupPatience, type LookupPatience } from "./lookup-patience.ts";

/** The recipient kinds the functions handle, by RecipientTypeDetails. */
export type RecipientKind = "mailbox" | "mailUser" | "distributionGroup" | "other";

const mailboxTypes = new Set([
  "UserMailbox",
  "SharedMailbox",
  "RoomMailbox",
  "EquipmentMailbox",
  "SchedulingMailbox",
  "LinkedMailbox",
  "TeamMailbox",
]);
const mailUserTypes = new Set(["MailUser", "GuestMailUser"]);
const groupTypes = new Set([
  "MailUniversalDistributionGroup",
  "MailUniversalSecurityGroup",
  "MailNonUniversalGroup",
]);

export function kindOf(recipientTypeDetails: string): RecipientKind {
  if (mailboxTypes.has(recipientTypeDetails)) return "mailbox";
  if (mailUserTypes.has(recipientTypeDetails)) return "mailUser";
  if (groupTypes.has(recipientTypeDetails)) return "distributionGroup";
  return "other";
}

/** The Get-* cmdlet that returns every property of this kind (Get-Recipient returns a subset). */
function readCmdletOf(kind: RecipientKind): string {
  switch (kind) {
    case "mailbox":
      return "Get-Mailbox";
    case "mailUser":
      return "Get-MailUser";
    case "distributionGroup":
      return "Get-DistributionGroup";
    case "other":
      return "Get-Recipient";
    default: {
      const unreachable: never = kind;
      throw new Error(`Unknown recipient kind ${String(unreachable)}`);
    }
  }
}

export interface ResolvedRecipient {
  readonly kind: RecipientKind;
  readonly recipientTypeDetails: string;
  /** The recipient's Guid: what every later cmdlet is given, so it cannot match someone else. */
  readonly guid: string;
  /** Every property, from the kind's own Get-* cmdlet. */
  readonly properties: Readonly<Record<string, unknown>>;
}

/**
 * Resolves a function's identity parameter with Get-Recipient, then reads the full object with the
 * kind's own cmdlet. "Not found" and "ambiguous" become permanent failures naming the parameter,
 * never its value.
 */
export async function getRecipient(
  exchange: ExchangeClient,
  functionName: string,
  parameterName: string,
  identity: string,
  signal: AbortSignal,
  patience: LookupPatience = defaultLookupPatience,
): Promise<ResolvedRecipient> {
  const found = await withPatience(patience, signal, () =>
    single(exchange, "Get-Recipient", identity, functionName, parameterName, signal),
  );
  const recipientTypeDetails = String(found.RecipientTypeDetails ?? "");
  const guid = String(found.Guid ?? "");
  if (guid === "")
    throw new NonRetriableError(reasonCodes.exchangeError, `${functionName}: Get-Recipient returned no Guid`);
  const kind = kindOf(recipientTypeDetails);
  const cmdlet = readCmdletOf(kind);
  const properties =
    cmdlet === "Get-Recipient"
      ? found
      : await single(exchange, cmdlet, guid, functionName, parameterName, signal);
  return { kind, recipientTypeDetails, guid, properties };
}

async function single(
  exchange: ExchangeClient,
  cmdlet: string,
  identity: string,
  functionName: string,
  parameterName: string,
  signal: AbortSignal,
): Promise<Record<string, unknown>> {
  let value: readonly Record<string, unknown>[];
  try {
    ({ value } = await exchange.invoke(cmdlet, { Identity: identity }, signal));
  } catch (error) {
    const info = exchangeErrorOf(error);
    if (info?.exceptionType?.endsWith("ManagementObjectNotFoundException") === true) {
      throw new NonRetriableError(
        reasonCodes.exchangeNotFound,
        `${functionName}: ${parameterName} matches no Exchange recipient (${cmdlet})`,
        { cause: error },
      );
    }
    throw error;
  }
  if (value.length === 0) {
    throw new NonRetriableError(
      reasonCodes.exchangeNotFound,
      `${functionName}: ${parameterName} matches no Exchange recipient (${cmdlet})`,
    );
  }
  if (value.length > 1) {
    throw new NonRetriableError(
      reasonCodes.exchangeBadRequest,
      `${functionName}: ${parameterName} matches more than one recipient`,
    );
  }
  return value[0]!;
}

/** The recipient's addresses as Exchange lists them (`SMTP:`, `smtp:`, `X500:`…). */
export function emailAddressesOf(properties: Readonly<Record<string, unknown>>): string[] {
  const addresses = properties.EmailAddresses;
  return Array.isArray(addresses)
    ? addresses.filter((address): address is string => typeof address === "string")
    : [];
}

/** The Set-* cmdlet for writing addresses, or a permanent failure naming the recipient type. */
export function setCmdletOf(
  recipient: ResolvedRecipient,
  functionName: string,
): "Set-Mailbox" | "Set-MailUser" {
  switch (recipient.kind) {
    case "mailbox":
      return "Set-Mailbox";
    case "mailUser":
      return "Set-MailUser";
    case "distributionGroup":
    case "other":
      throw new NonRetriableError(
        reasonCodes.exchangeBadRequest,
        `${functionName}: the recipient is a ${typeName(recipient)}; only mailboxes and mail users are supported`,
      );
    default: {
      const unreachable: never = recipient.kind;
      throw new Error(`Unknown recipient kind ${String(unreachable)}`);
    }
  }
}

/** For the mail-user-only functions: anything else is a permanent failure naming its type. */
export function requireMailUser(recipient: ResolvedRecipient, functionName: string): void {
  if (recipient.kind !== "mailUser") {
    throw new NonRetriableError(
      reasonCodes.exchangeBadRequest,
      `${functionName}: the recipient is a ${typeName(recipient)}, not a MailUser`,
    );
  }
}

/** RecipientTypeDetails is an enum name; anything else is not repeated into a message. */
function typeName(recipient: ResolvedRecipient): string {
  return /^\w{1,60}$/.test(recipient.recipientTypeDetails)
    ? recipient.recipientTypeDetails
    : "recipient of another type";
}

import { z } from "zod";
import { parseFunctionParams } from "../parse-function-params.ts";
import type { WorkerFunction } from "../worker-function.ts";
import { bareAddress, hasAddress } from "./addresses.ts";
import { identity, smtpAddress } from "./exchange-params.ts";
import { explainConflict } from "./explain-conflict.ts";
import { emailAddressesOf, getRecipient, setCmdletOf } from "./get-recipient.ts";
import type { LookupPatience } from "./lookup-patience.ts";

const name = "Add-ExchangeSecondaryEmail";
const params = z.object({ Identity: identity, EmailAddress: smtpAddress });

/**
 * Adds `EmailAddress` as a secondary SMTP address of a mailbox or mail user. Idempotent: an
 * address the recipient already has (secondary or primary) is success with no write; a re-run
 * that reads a not-yet-replicated recipient sends the same hashtable Add, which Exchange answers
 * as "nothing modified". An address owned by another recipient is exchange.conflict (permanent).
 */
export function addExchangeSecondaryEmail(patience: LookupPatience): WorkerFunction {
  return async (raw, { tenant, signal }) => {
    const { Identity, EmailAddress } = parseFunctionParams(name, params, raw);
    const recipient = await getRecipient(tenant.exchange, name, "Identity", Identity, signal, patience);
    const cmdlet = setCmdletOf(recipient, name);
    if (hasAddress(emailAddressesOf(recipient.properties), EmailAddress)) return true;
    const EmailAddresses = {
      "@odata.type": "#Exchange.GenericHashTable",
      Add: [`smtp:${bareAddress(EmailAddress)}`],
    };
    await explainConflict(name, "EmailAddress", () =>
      tenant.exchange.invoke(cmdlet, { Identity: recipient.guid, EmailAddresses }, signal),
    );
    return true;
  };
}

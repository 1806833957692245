import { z } from "zod";
import { parseFunctionParams } from "../parse-function-params.ts";
import type { WorkerFunction } from "../worker-function.ts";
import { bareAddress, primaryOf } from "./addresses.ts";
import { identity, smtpAddress } from "./exchange-params.ts";
import { explainConflict } from "./explain-conflict.ts";
import { emailAddressesOf, getRecipient, setCmdletOf } from "./get-recipient.ts";
import type { LookupPatience } from "./lookup-patience.ts";

const name = "Set-ExchangePrimaryEmail";
const params = z.object({ Identity: identity, PrimarySmtpAddress: smtpAddress });

/**
 * Makes `PrimarySmtpAddress` the primary SMTP address of a mailbox or mail user; Exchange keeps
 * the old primary as a secondary. Written with WindowsEmailAddress, which Exchange Online honours
 * for both kinds (Set-MailUser's PrimarySmtpAddress works on-premises only), and only while the
 * recipient is not under an email address policy: so the same call turns the policy off when it
 * is on. Idempotent: already primary → success with no write; a stale re-run re-sends the same
 * value, which Exchange answers as "nothing modified".
 */
export function setExchangePrimaryEmail(patience: LookupPatience): WorkerFunction {
  return async (raw, { tenant, signal }) => {
    const { Identity, PrimarySmtpAddress } = parseFunctionParams(name, params, raw);
    const recipient = await getRecipient(tenant.exchange, name, "Identity", Identity, signal, patience);
    const cmdlet = setCmdletOf(recipient, name);
    const address = bareAddress(PrimarySmtpAddress);
    const current =
      primaryOf(emailAddressesOf(recipient.properties)) ??
      String(recipient.properties.PrimarySmtpAddress ?? "").toLowerCase();
    if (current === address.toLowerCase()) return true;
    const policyEnabled = String(recipient.properties.EmailAddressPolicyEnabled).toLowerCase() === "true";
    const parameters = {
      Identity: recipient.guid,
      WindowsEmailAddress: address,
      ...(policyEnabled ? { EmailAddressPolicyEnabled: false } : {}),
    };
    await explainConflict(name, "PrimarySmtpAddress", () =>
      tenant.exchange.invoke(cmdlet, parameters, signal),
    );
    return true;
  };
}

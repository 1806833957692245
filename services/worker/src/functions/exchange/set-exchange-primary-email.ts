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
 * is on. The Set-* is always sent, even when a read shows the address already primary: a read
 * may be stale, and a rollback right after a change (A → B, then at once B → A) reads A as
 * primary and would skip the write, leaving B. Exchange applies it on the latest state and
 * answers an unchanged value with "no settings … have been modified" (a re-run changes nothing).
 * The policy is turned off only when the read shows it on and the address not yet primary: a
 * recipient whose policy already gives it that primary keeps its policy.
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
    const policyEnabled = String(recipient.properties.EmailAddressPolicyEnabled).toLowerCase() === "true";
    const alreadyPrimary = current === address.toLowerCase();
    const parameters = {
      Identity: recipient.guid,
      WindowsEmailAddress: address,
      ...(policyEnabled && !alreadyPrimary ? { EmailAddressPolicyEnabled: false } : {}),
    };
    await explainConflict(name, "PrimarySmtpAddress", () =>
      tenant.exchange.invoke(cmdlet, parameters, signal),
    );
    return true;
  };
}

import { z } from "zod";
import { parseFunctionParams } from "../parse-function-params.ts";
import type { WorkerFunction } from "../worker-function.ts";
import { bareAddress } from "./addresses.ts";
import { identity, smtpAddress } from "./exchange-params.ts";
import { explainConflict } from "./explain-conflict.ts";
import { getRecipient, setCmdletOf } from "./get-recipient.ts";
import type { LookupPatience } from "./lookup-patience.ts";

const name = "Set-ExchangePrimaryEmail";
const params = z.object({ Identity: identity, PrimarySmtpAddress: smtpAddress });

/**
 * Makes `PrimarySmtpAddress` the primary SMTP address of a mailbox or mail user; Exchange keeps
 * the old primary as a secondary. Written with WindowsEmailAddress, the one parameter Exchange
 * Online honours for both kinds (MicrosoftDocs/office-docs-powershell Set-Mailbox.md: its
 * PrimarySmtpAddress "is available only in on-premises Exchange"; Set-MailUser.md: "functional
 * only in on-premises Exchange"). `EmailAddressPolicyEnabled` is never sent, whatever a read shows:
 * both pages document it as "available only in on-premises Exchange", so Exchange Online refuses
 * the whole call with a parameter binding error, and there address policies apply to Microsoft 365
 * Groups only (New-EmailAddressPolicy.md), so they never hold a mailbox's primary. The Set-* is
 * always sent, even when a read shows the address already primary: a read may be stale, and a
 * rollback right after a change (A → B, then at once B → A) reads A as primary and would skip the
 * write, leaving B. Exchange applies it on the latest state and answers an unchanged value with
 * "no settings … have been modified" (a re-run changes nothing).
 */
export function setExchangePrimaryEmail(patience: LookupPatience): WorkerFunction {
  return async (raw, { tenant, signal }) => {
    const { Identity, PrimarySmtpAddress } = parseFunctionParams(name, params, raw);
    const recipient = await getRecipient(tenant.exchange, name, "Identity", Identity, signal, patience);
    const cmdlet = setCmdletOf(recipient, name);
    const parameters = { Identity: recipient.guid, WindowsEmailAddress: bareAddress(PrimarySmtpAddress) };
    await explainConflict(name, "PrimarySmtpAddress", () =>
      tenant.exchange.invoke(cmdlet, parameters, signal),
    );
    return true;
  };
}

import { z } from "zod";
import { parseFunctionParams } from "../parse-function-params.ts";
import type { WorkerFunction } from "../worker-function.ts";
import { bareAddress } from "./addresses.ts";
import { identity, smtpAddress } from "./exchange-params.ts";
import { getRecipient, requireMailUser } from "./get-recipient.ts";
import type { LookupPatience } from "./lookup-patience.ts";

const name = "Set-ExchangeExternalAddress";
const params = z.object({ Identity: identity, ExternalEmailAddress: smtpAddress });

/**
 * Sets a mail user's ExternalEmailAddress (where its mail is delivered: during a migration, the
 * source tenant's mailbox). Mail users only; a mailbox is a permanent exchange.bad_request naming
 * its type. The Set-MailUser is always sent, even when a read shows that address already: a read
 * may be stale, and a rollback right after a change (A → B, then at once B → A) reads A and
 * would skip the write, leaving B. Exchange answers an unchanged value with "no settings … have
 * been modified", so a re-run changes nothing.
 */
export function setExchangeExternalAddress(patience: LookupPatience): WorkerFunction {
  return async (raw, { tenant, signal }) => {
    const { Identity, ExternalEmailAddress } = parseFunctionParams(name, params, raw);
    const recipient = await getRecipient(tenant.exchange, name, "Identity", Identity, signal, patience);
    requireMailUser(recipient, name);
    await tenant.exchange.invoke(
      "Set-MailUser",
      { Identity: recipient.guid, ExternalEmailAddress: `SMTP:${bareAddress(ExternalEmailAddress)}` },
      signal,
    );
    return true;
  };
}

import { z } from "zod";
import { parseFunctionParams } from "../parse-function-params.ts";
import type { WorkerFunction } from "../worker-function.ts";
import { blankAsMissing, guid, identity } from "./exchange-params.ts";
import { explainConflict } from "./explain-conflict.ts";
import { getRecipient, requireMailUser } from "./get-recipient.ts";
import type { LookupPatience } from "./lookup-patience.ts";

const name = "Set-ExchangeMailUserGuids";
const params = z.object({
  Identity: identity,
  ExchangeGuid: guid,
  ArchiveGuid: blankAsMissing(guid.optional()),
  /** The source mailbox's LegacyExchangeDN, kept as an X500 address so old replies still resolve. */
  LegacyExchangeDN: blankAsMissing(z.string().trim().min(1).optional()),
});

/**
 * Prepares a target mail user for a cross-tenant mailbox move: its ExchangeGuid (and ArchiveGuid)
 * must equal the source mailbox's, and the source LegacyExchangeDN must be one of its `X500:`
 * addresses. Mail users only. One Set-MailUser with every given value, always sent, the X500 as
 * an EmailAddresses Add (a no-op when the address is there): a read may be stale, and one that
 * shows the values already set (GUIDs rolled back right after a change, say) would skip a write
 * that is needed. Exchange answers unchanged values with "no settings … have been modified", so
 * a re-run changes nothing.
 */
export function setExchangeMailUserGuids(patience: LookupPatience): WorkerFunction {
  return async (raw, { tenant, signal }) => {
    const { Identity, ExchangeGuid, ArchiveGuid, LegacyExchangeDN } = parseFunctionParams(name, params, raw);
    const recipient = await getRecipient(tenant.exchange, name, "Identity", Identity, signal, patience);
    requireMailUser(recipient, name);
    const changes: Record<string, unknown> = {
      ExchangeGuid,
      ...(ArchiveGuid !== undefined ? { ArchiveGuid } : {}),
      ...(LegacyExchangeDN !== undefined
        ? {
            EmailAddresses: {
              "@odata.type": "#Exchange.GenericHashTable",
              Add: [`X500:${LegacyExchangeDN.replace(/^x500:/i, "")}`],
            },
          }
        : {}),
    };
    await explainConflict(name, "a value of ExchangeGuid, ArchiveGuid or LegacyExchangeDN", () =>
      tenant.exchange.invoke("Set-MailUser", { Identity: recipient.guid, ...changes }, signal),
    );
    return true;
  };
}

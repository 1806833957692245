import { z } from "zod";
import { parseFunctionParams } from "../parse-function-params.ts";
import type { WorkerFunction } from "../worker-function.ts";
import { hasAddress } from "./addresses.ts";
import { blankAsMissing, guid, identity } from "./exchange-params.ts";
import { explainConflict } from "./explain-conflict.ts";
import { emailAddressesOf, getRecipient, requireMailUser } from "./get-recipient.ts";
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
 * addresses. Mail users only. Idempotent: when everything already holds → success with no write;
 * otherwise one Set-MailUser with only what differs.
 */
export function setExchangeMailUserGuids(patience: LookupPatience): WorkerFunction {
  return async (raw, { tenant, signal }) => {
    const { Identity, ExchangeGuid, ArchiveGuid, LegacyExchangeDN } = parseFunctionParams(name, params, raw);
    const recipient = await getRecipient(tenant.exchange, name, "Identity", Identity, signal, patience);
    requireMailUser(recipient, name);
    const { properties } = recipient;
    const changes: Record<string, unknown> = {};
    if (String(properties.ExchangeGuid ?? "").toLowerCase() !== ExchangeGuid)
      changes.ExchangeGuid = ExchangeGuid;
    if (ArchiveGuid !== undefined && String(properties.ArchiveGuid ?? "").toLowerCase() !== ArchiveGuid) {
      changes.ArchiveGuid = ArchiveGuid;
    }
    const x500 =
      LegacyExchangeDN === undefined ? undefined : `X500:${LegacyExchangeDN.replace(/^x500:/i, "")}`;
    if (x500 !== undefined && !hasAddress(emailAddressesOf(properties), x500)) {
      changes.EmailAddresses = { "@odata.type": "#Exchange.GenericHashTable", Add: [x500] };
    }
    if (Object.keys(changes).length === 0) return true;
    await explainConflict(name, "a value of ExchangeGuid, ArchiveGuid or LegacyExchangeDN", () =>
      tenant.exchange.invoke("Set-MailUser", { Identity: recipient.guid, ...changes }, signal),
    );
    return true;
  };
}

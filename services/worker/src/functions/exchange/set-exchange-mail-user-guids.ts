import { z } from "zod";
import { parseFunctionParams } from "../parse-function-params.ts";
import type { WorkerFunction } from "../worker-function.ts";
import { blankAsMissing, guid, identity } from "./exchange-params.ts";
import { explainConflict } from "./explain-conflict.ts";
import { getRecipient, requireMailUser } from "./get-recipient.ts";
import type { LookupPatience } from "./lookup-patience.ts";
import { refuseFormerMailbox, refuseLicensedBeforeGuids } from "./move-target-checks.ts";
import { x500Addresses, x500Of } from "./x500-addresses.ts";

const name = "Set-ExchangeMailUserGuids";
const zeroGuid = "00000000-0000-0000-0000-000000000000";
const params = z.object({
  Identity: identity,
  ExchangeGuid: guid.refine(
    (value) => value !== zeroGuid,
    "must be the source mailbox's ExchangeGuid, not zero",
  ),
  /** Zero (or blank) means the source mailbox has no archive: nothing to stamp. */
  ArchiveGuid: blankAsMissing(guid.optional()),
  /** The source mailbox's LegacyExchangeDN, kept as an X500 address so old replies still resolve. */
  LegacyExchangeDN: blankAsMissing(z.string().trim().min(1).optional()),
  /** Every X500 proxy address of the source mailbox (a list, or one string separated by `;`). */
  X500Addresses: blankAsMissing(x500Addresses.optional()),
});

/**
 * Prepares a target mail user for a cross-tenant mailbox move, as "Cross-tenant mailbox
 * migration", Prerequisites for target user objects
 * (https://learn.microsoft.com/microsoft-365/enterprise/cross-tenant-mailbox-migration,
 * MicrosoftDocs/microsoft-365-docs microsoft-365/enterprise/cross-tenant-mailbox-migration.md)
 * requires: the source's ExchangeGuid, its ArchiveGuid "if the source mailbox is Archive enabled"
 * (a zero ArchiveGuid means no archive and is not sent), the LegacyExchangeDN "as x500:
 * proxyAddress" and "all x500 addresses from the source mailbox" (X500Addresses), each once,
 * added to the addresses the target already has. Refused before any write, permanently:
 * - the target holds an Exchange Online license while its ExchangeGuid is not the requested one
 *   → exchange.licensed_before_guids (item 4: a license first provisions a new mailbox);
 * - the target is a mailbox, or Get-User shows it had one → exchange.target_had_mailbox (item 5).
 * One Set-MailUser with every value, always sent, the X500s as an EmailAddresses Add (a no-op for
 * an address already there): a read may be stale, and one that shows the values already set
 * (GUIDs rolled back right after a change, say) would skip a write that is needed. Exchange
 * answers unchanged values with "no settings … have been modified", so a re-run changes nothing.
 */
export function setExchangeMailUserGuids(patience: LookupPatience): WorkerFunction {
  return async (raw, { tenant, signal }) => {
    const p = parseFunctionParams(name, params, raw);
    const recipient = await getRecipient(tenant.exchange, name, "Identity", p.Identity, signal, patience);
    const stamped = String(recipient.properties.ExchangeGuid ?? "").toLowerCase() === p.ExchangeGuid;
    if (!stamped) await refuseLicensedBeforeGuids(tenant, name, recipient, signal);
    await refuseFormerMailbox(tenant, name, recipient, signal);
    requireMailUser(recipient, name);
    const x500 = x500Of([
      ...(p.LegacyExchangeDN !== undefined ? [p.LegacyExchangeDN] : []),
      ...(p.X500Addresses ?? []),
    ]);
    const changes: Record<string, unknown> = {
      ExchangeGuid: p.ExchangeGuid,
      ...(p.ArchiveGuid !== undefined && p.ArchiveGuid !== zeroGuid ? { ArchiveGuid: p.ArchiveGuid } : {}),
      ...(x500.length > 0
        ? { EmailAddresses: { "@odata.type": "#Exchange.GenericHashTable", Add: x500 } }
        : {}),
    };
    await explainConflict(
      name,
      "a value of ExchangeGuid, ArchiveGuid, LegacyExchangeDN or X500Addresses",
      () => tenant.exchange.invoke("Set-MailUser", { Identity: recipient.guid, ...changes }, signal),
    );
    return true;
  };
}

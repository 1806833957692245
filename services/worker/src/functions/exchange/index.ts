import { safeToRepeat, type FunctionModule } from "../worker-function.ts";
import { defaultLookupPatience, type LookupPatience } from "./lookup-patience.ts";
import { addExchangeSecondaryEmail } from "./add-exchange-secondary-email.ts";
import { setExchangeExternalAddress } from "./set-exchange-external-address.ts";
import { setExchangeMailUserGuids } from "./set-exchange-mail-user-guids.ts";
import { setExchangePrimaryEmail } from "./set-exchange-primary-email.ts";
import { testExchangeAttributeMatch } from "./test-exchange-attribute-match.ts";
import { testExchangeGroupMembership } from "./test-exchange-group-membership.ts";

/**
 * The Exchange Online half of the standard library, named as in the PowerShell worker. Each
 * function reads before it writes and writes only what differs, so a retried or redelivered job
 * changes nothing the first run already did. `lookupPatience` bounds how long a lookup waits for
 * an object that is not found yet (replication); tests shorten it.
 */
export function createExchangeFunctions(options: { lookupPatience?: LookupPatience } = {}): FunctionModule {
  const patience = options.lookupPatience ?? defaultLookupPatience;
  // Every one reads before it writes and writes only what differs: safe to repeat after a cut-off run.
  return {
    "Add-ExchangeSecondaryEmail": safeToRepeat(addExchangeSecondaryEmail(patience)),
    "Set-ExchangePrimaryEmail": safeToRepeat(setExchangePrimaryEmail(patience)),
    "Set-ExchangeExternalAddress": safeToRepeat(setExchangeExternalAddress(patience)),
    "Set-ExchangeMailUserGuids": safeToRepeat(setExchangeMailUserGuids(patience)),
    "Test-ExchangeAttributeMatch": safeToRepeat(testExchangeAttributeMatch(patience)),
    "Test-ExchangeGroupMembership": safeToRepeat(testExchangeGroupMembership(patience)),
  };
}

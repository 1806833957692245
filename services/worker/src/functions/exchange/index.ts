import type { FunctionModule } from "../worker-function.ts";
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
  return {
    "Add-ExchangeSecondaryEmail": addExchangeSecondaryEmail(patience),
    "Set-ExchangePrimaryEmail": setExchangePrimaryEmail(patience),
    "Set-ExchangeExternalAddress": setExchangeExternalAddress(patience),
    "Set-ExchangeMailUserGuids": setExchangeMailUserGuids(patience),
    "Test-ExchangeAttributeMatch": testExchangeAttributeMatch(patience),
    "Test-ExchangeGroupMembership": testExchangeGroupMembership(patience),
  };
}

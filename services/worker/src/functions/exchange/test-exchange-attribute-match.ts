import { z } from "zod";
import { NonRetriableError, reasonCodes } from "@matoolkit/domain";
import { parseFunctionParams } from "../parse-function-params.ts";
import type { WorkerFunction } from "../worker-function.ts";
import { propertyMatches, propertyOf } from "./attribute-comparison.ts";
import { flag, identity } from "./exchange-params.ts";
import { getRecipient, type ResolvedRecipient } from "./get-recipient.ts";
import { withPatience, type LookupPatience } from "./lookup-patience.ts";

const name = "Test-ExchangeAttributeMatch";
const expected = z.union([z.string(), z.array(z.string()), z.null()]);
const params = z.object({
  Identity: identity,
  Attributes: z
    .record(z.string().min(1), expected)
    .refine((attributes) => Object.keys(attributes).length > 0, "must name at least one property"),
  FailOnMismatch: flag.default(true),
  MultiValueMode: z.enum(["contains", "exact"]).default("contains"),
});

/**
 * Checks that a recipient's properties (read with its kind's own Get-* cmdlet, names in any case)
 * hold the expected values; see attribute-comparison.ts for the rules. A mismatch fails the step
 * permanently with check.mismatch naming the properties, never the values, unless
 * `FailOnMismatch: false`, which returns `Match: false` instead. Read-only, so re-runs are safe.
 *
 * Runbooks run this right after the write it verifies (e.g. Add-ExchangeSecondaryEmail), and the
 * server that answers may not have seen that write yet. So a mismatch is re-read within the
 * lookup patience (the same attempts as "not found", shared with it) and reported only if it
 * still holds on the last attempt: a match on any read returns at once, a genuine mismatch takes
 * the whole patience (default 3 × 2 s) to be reported. The waits are abortable (job timeout).
 */
export function testExchangeAttributeMatch(patience: LookupPatience): WorkerFunction {
  return async (raw, { tenant, signal }) => {
    const { Identity, Attributes, FailOnMismatch, MultiValueMode } = parseFunctionParams(name, params, raw);
    const mismatchesOf = (recipient: ResolvedRecipient): string[] =>
      Object.entries(Attributes)
        .filter(
          ([property, value]) =>
            !propertyMatches(propertyOf(recipient.properties, property), value, MultiValueMode),
        )
        .map(([property]) => property);
    // One read per attempt: withPatience below spends the attempts, on "not found" and mismatch.
    const once: LookupPatience = { attempts: 1, delayMs: patience.delayMs };
    let last: ResolvedRecipient | undefined;
    const read = async (): Promise<string[]> => {
      try {
        last = await getRecipient(tenant.exchange, name, "Identity", last?.guid ?? Identity, signal, once);
      } catch (error) {
        // Found before: a server answering "not found" now says nothing new, the last read stands.
        const notFound = error instanceof NonRetriableError && error.reason === reasonCodes.exchangeNotFound;
        if (!notFound || last === undefined) throw error;
      }
      return mismatchesOf(last);
    };
    const Mismatches = await withPatience(patience, signal, read, (found) => found.length === 0);
    const Match = Mismatches.length === 0;
    if (!Match && FailOnMismatch) {
      throw new NonRetriableError(
        reasonCodes.checkMismatch,
        `${name}: ${Mismatches.length} attribute(s) do not match: ${Mismatches.join(", ")}`,
      );
    }
    return { complete: true, data: { Match, Mismatches } };
  };
}

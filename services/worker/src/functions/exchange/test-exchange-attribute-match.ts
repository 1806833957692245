import { z } from "zod";
import { NonRetriableError, reasonCodes } from "@matoolkit/domain";
import { parseFunctionParams } from "../parse-function-params.ts";
import type { WorkerFunction } from "../worker-function.ts";
import { propertyMatches, propertyOf } from "./attribute-comparison.ts";
import { flag, identity } from "./exchange-params.ts";
import { getRecipient } from "./get-recipient.ts";
import type { LookupPatience } from "./lookup-patience.ts";

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
 */
export function testExchangeAttributeMatch(patience: LookupPatience): WorkerFunction {
  return async (raw, { tenant, signal }) => {
    const { Identity, Attributes, FailOnMismatch, MultiValueMode } = parseFunctionParams(name, params, raw);
    const recipient = await getRecipient(tenant.exchange, name, "Identity", Identity, signal, patience);
    const Mismatches = Object.entries(Attributes)
      .filter(
        ([property, value]) =>
          !propertyMatches(propertyOf(recipient.properties, property), value, MultiValueMode),
      )
      .map(([property]) => property);
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

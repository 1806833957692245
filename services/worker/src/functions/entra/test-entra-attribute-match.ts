import { z } from "zod";
import { MatoolkitError, NonRetriableError, reasonCodes } from "@matoolkit/domain";
import { parseFunctionParams } from "../parse-function-params.ts";
import type { WorkerFunction } from "../worker-function.ts";
import { matches, type Expected } from "./compare-attributes.ts";
import type { EntraSettings } from "./entra-options.ts";
import { flag, userReference } from "./entra-params.ts";
import { resolveUser } from "./resolve-directory-object.ts";
import { graphUserPropertyName } from "./user-properties.ts";

const name = "Test-EntraAttributeMatch";

const expectedValue = z.union([
  z.null(),
  z.union([z.string(), z.number(), z.boolean()]).transform(String),
  z.array(z.union([z.string(), z.number(), z.boolean()]).transform(String)),
]);
const attributeMap = z
  .record(z.string().trim().min(1), expectedValue)
  .refine((map) => Object.keys(map).length > 0, {
    message: "expected at least one attribute",
  });
/** A map in the runbook, or the same map as JSON text (a template resolved to a string). */
const attributes = z.union([
  attributeMap,
  z
    .string()
    .transform((value, ctx) => {
      try {
        return JSON.parse(value) as unknown;
      } catch {
        ctx.addIssue({ code: "custom", message: "expected a map or JSON object text" });
        return z.NEVER;
      }
    })
    .pipe(attributeMap),
]);

const params = z.object({
  UserId: userReference,
  Attributes: attributes,
  FailOnMismatch: flag.default(true),
  MultiValueMode: z.enum(["contains", "exact"]).default("contains"),
});

/**
 * Test-EntraAttributeMatch (Object, read-only): do the user's Graph properties hold the expected
 * values? Property names are case-insensitive (mapped to Graph's camelCase) and only they are
 * read ($select). Comparison rules: compare-attributes.ts. Data: `{ Match, Mismatches }` with
 * property names only. A mismatch throws NonRetriable check.mismatch (naming the properties,
 * never values) unless FailOnMismatch is false. A missing user is graph.not_found.
 */
export function testEntraAttributeMatch(settings: EntraSettings): WorkerFunction {
  return async (raw, context) => {
    const p = parseFunctionParams(name, params, raw);
    const expectations = new Map<string, Expected>();
    for (const [property, expected] of Object.entries(p.Attributes)) {
      expectations.set(graphUserPropertyName(property), expected);
    }
    const named = { functionName: name, parameter: "UserId" };
    const properties = [...expectations.keys()];
    const user = await resolveUser(context, settings, named, p.UserId, properties).catch((error: unknown) => {
      // Graph answers 400 for a property the user type does not have: say which were asked for.
      if (error instanceof MatoolkitError && error.reason === reasonCodes.graphBadRequest) {
        throw new NonRetriableError(
          reasonCodes.graphBadRequest,
          `${name}: Graph refused the properties named in Attributes (${properties.join(", ")})`,
          { cause: error },
        );
      }
      throw error;
    });
    const mismatches = [...expectations]
      .filter(([property, expected]) => !matches(property, user[property], expected, p.MultiValueMode))
      .map(([property]) => property);
    if (mismatches.length > 0 && p.FailOnMismatch) {
      throw new NonRetriableError(
        reasonCodes.checkMismatch,
        `${name}: attributes do not match: ${mismatches.join(", ")}`,
      );
    }
    return { complete: true, data: { Match: mismatches.length === 0, Mismatches: mismatches } };
  };
}

import { z } from "zod";
import { MatoolkitError, NonRetriableError, reasonCodes } from "@matoolkit/domain";
import { parseFunctionParams } from "../parse-function-params.ts";
import type { WorkerFunction } from "../worker-function.ts";
import { matches, type Expected } from "./compare-attributes.ts";
import type { EntraSettings } from "./entra-options.ts";
import { flag, userReference } from "./entra-params.ts";
import { untilHolds } from "./replication-grace.ts";
import { findUser, resolveUser, type GraphUser } from "./resolve-directory-object.ts";
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
 *
 * Runbooks run this right after the write it verifies, and Graph may answer from a replica that
 * has not seen that write yet. So a mismatch is re-read within the replication grace (as "not
 * found" is; the grace counts from the first read) and reported only if it still holds at the
 * end: a match on any read returns at once, a genuine mismatch takes up to the grace (default
 * 10 s) to be reported. The wait is abortable (job timeout).
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
    const mismatchesOf = (read: GraphUser): string[] =>
      [...expectations]
        .filter(([property, expected]) => !matches(property, read[property], expected, p.MultiValueMode))
        .map(([property]) => property);
    let user: GraphUser | undefined;
    const check = async (): Promise<string[]> => {
      // First read: resolve the parameter (re-read while not found). Re-reads: the same user by id;
      // a replica answering 404 now says nothing new, so the last read stands.
      user =
        user === undefined
          ? await resolveUser(context, settings, named, p.UserId, properties)
          : ((await findUser(context.tenant.graph, user.id, properties, context.signal)) ?? user);
      return mismatchesOf(user);
    };
    const mismatches = await untilHolds(
      check,
      (found) => found.length === 0,
      settings.replicationGraceMs,
      context.signal,
    ).catch((error: unknown) => {
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
    if (mismatches.length > 0 && p.FailOnMismatch) {
      throw new NonRetriableError(
        reasonCodes.checkMismatch,
        `${name}: attributes do not match: ${mismatches.join(", ")}`,
      );
    }
    return { complete: true, data: { Match: mismatches.length === 0, Mismatches: mismatches } };
  };
}

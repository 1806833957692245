import { parseProxyAddress, proxyAddressMatches } from "./addresses.ts";

/** What a runbook may expect of a property: a value, a list of values, or null (empty). */
export type ExpectedValue = string | readonly string[] | null;

export type MultiValueMode = "contains" | "exact";

/** Prefixes Exchange uses in proxy addresses; values carrying one compare as addresses. */
const proxyPrefixes = new Set(["smtp", "x500", "x400", "sip", "eum", "spo", "fax", "notes", "gwise"]);

/**
 * Compares one recipient property with what the runbook expects. Every value is compared as a
 * list (a scalar is a one-element list, null or missing an empty one), so single and multi-valued
 * properties follow one rule: `contains` wants every expected value present, `exact` the same
 * values and no others. Text compares case-insensitively, as Exchange does; proxy addresses
 * compare by address, and by prefix when the expected value has one (`SMTP:` primary vs `smtp:`).
 */
export function propertyMatches(actual: unknown, expected: ExpectedValue, mode: MultiValueMode): boolean {
  const have = valuesOf(actual);
  if (expected === null) return have.length === 0;
  const want = typeof expected === "string" ? [expected] : expected;
  const allFound = want.every((value) => have.some((candidate) => valueMatches(value, candidate)));
  switch (mode) {
    case "contains":
      return allFound;
    case "exact":
      return allFound && have.every((candidate) => want.some((value) => valueMatches(value, candidate)));
    default: {
      const unreachable: never = mode;
      throw new Error(`Unknown MultiValueMode ${String(unreachable)}`);
    }
  }
}

function valueMatches(expected: string, actual: string): boolean {
  // Before any case-insensitive comparison: `smtp:` and `SMTP:` differ in meaning.
  if (isProxyAddress(actual)) return proxyAddressMatches(expected, actual);
  return expected.trim().toLowerCase() === actual.trim().toLowerCase();
}

function isProxyAddress(value: string): boolean {
  const { prefix } = parseProxyAddress(value);
  return prefix !== undefined && proxyPrefixes.has(prefix.toLowerCase());
}

/** Property values as strings: JSON scalars as text (true → "true"), lists flattened, empties dropped. */
function valuesOf(actual: unknown): string[] {
  if (actual === null || actual === undefined) return [];
  const items = Array.isArray(actual) ? actual : [actual];
  return items
    .filter((item) => item !== null && item !== undefined)
    .map((item) => (typeof item === "object" ? JSON.stringify(item) : String(item)))
    .filter((item) => item !== "");
}

/** The property whatever the casing of its name, as PowerShell resolves it. */
export function propertyOf(properties: Readonly<Record<string, unknown>>, name: string): unknown {
  if (Object.hasOwn(properties, name)) return properties[name];
  const wanted = name.toLowerCase();
  const key = Object.keys(properties).find((candidate) => candidate.toLowerCase() === wanted);
  return key === undefined ? undefined : properties[key];
}

/**
 * Compares a Graph user's properties with expectations, the way migration engineers mean them:
 * case-insensitively, and multi-value aware. For a multi-valued property (proxyAddresses,
 * otherMails, businessPhones, …) a single expected string means "contains it" and a list means
 * "contains every item" (`contains`, the default); with `exact` the property must hold exactly
 * the expected values (one string or a list), in any order, ignoring duplicates. For a
 * single-valued property a list means "equals one of them". `null` means "must be empty"
 * (null, "" or []). A proxyAddresses expectation without a prefix also matches an `smtp:` entry.
 */
export type Expected = string | readonly string[] | null;
export type MultiValueMode = "contains" | "exact";

export function matches(
  property: string,
  actual: unknown,
  expected: Expected,
  mode: MultiValueMode,
): boolean {
  if (expected === null) return isEmpty(actual);
  if (Array.isArray(actual)) {
    const values = actual.map((value) => normalize(property, String(value)));
    const wanted = (typeof expected === "string" ? [expected] : expected).map((value) =>
      normalize(property, value),
    );
    const have = new Set(values);
    const containsAll = wanted.every((value) => have.has(value));
    return mode === "exact" ? containsAll && new Set(wanted).size === have.size : containsAll;
  }
  if (isEmpty(actual)) return typeof expected === "string" ? expected.trim() === "" : expected.length === 0;
  if (typeof actual === "object") return false; // complex values (identities) are not comparable as text
  const value = fold(String(actual));
  return typeof expected === "string"
    ? fold(expected) === value
    : expected.some((item) => fold(item) === value);
}

function isEmpty(value: unknown): boolean {
  return (
    value === null || value === undefined || value === "" || (Array.isArray(value) && value.length === 0)
  );
}

function fold(value: string): string {
  return value.trim().toLowerCase();
}

/** proxyAddresses entries carry `SMTP:`/`smtp:` prefixes; a bare address means the SMTP one. */
function normalize(property: string, value: string): string {
  const folded = fold(value);
  if (property === "proxyAddresses" && !/^[a-z0-9]+:/.test(folded)) return `smtp:${folded}`;
  return folded;
}

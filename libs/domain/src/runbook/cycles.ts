/**
 * Whether a value built from YAML refers to itself (`x: &a [*a]`): the yaml library builds the
 * cycle faithfully, and every later step (zod, JSON) would recurse forever or throw on it.
 */
export function hasCycle(value: unknown, ancestors: Set<object> = new Set()): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (ancestors.has(value)) return true;
  ancestors.add(value);
  const children = value instanceof Map ? [...value.values()] : Object.values(value);
  const cyclic = children.some((child) => hasCycle(child, ancestors));
  ancestors.delete(value);
  return cyclic;
}

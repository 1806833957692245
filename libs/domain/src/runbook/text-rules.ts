import type { Finding, PathSegment } from "./problems.ts";

// NUL, or a UTF-16 surrogate without its pair: what YAML escapes ("\u0000", "\ud800") can produce
// and PostgreSQL's text and jsonb refuse; a runbook holding one could never be stored or run.
const unstorable = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const message =
  "contains a NUL character or an unpaired surrogate (an escape such as \\u0000), which cannot be stored";

/** Every key or string value holding unstorable text, at its path (keys are reported at the key). */
export function unstorableTextFindings(value: unknown, path: PathSegment[] = []): Finding[] {
  if (typeof value === "string") return unstorable.test(value) ? [{ path, message }] : [];
  if (Array.isArray(value))
    return value.flatMap((item, index) => unstorableTextFindings(item, [...path, index]));
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([key, item]) =>
    unstorable.test(key)
      ? [{ path: [...path, key], anchor: "key" as const, message }]
      : unstorableTextFindings(item, [...path, key]),
  );
}

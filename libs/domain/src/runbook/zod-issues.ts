import type { z } from "zod";
import type { Finding, PathSegment } from "./problems.ts";

/** YAML authors think in mappings and lists, not objects and arrays. */
const EXPECTED_NAMES: Record<string, string> = {
  object: "a mapping",
  record: "a mapping",
  array: "a list",
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "a boolean",
};

function describeInput(input: unknown): string {
  if (input === null) return "null";
  if (Array.isArray(input)) return "a list";
  if (typeof input === "object") return "a mapping";
  if (typeof input === "number" || typeof input === "boolean") return `${typeof input} ${String(input)}`;
  return `a ${typeof input}`;
}

function toPath(path: readonly PropertyKey[]): PathSegment[] {
  return path.map((segment) => (typeof segment === "number" ? segment : String(segment)));
}

/** Turns zod issues (parsed with `reportInput: true`) into author-facing findings. */
export function findingsFromZodIssues(issues: readonly z.core.$ZodIssue[]): Finding[] {
  return issues.flatMap((issue): Finding[] => {
    const path = toPath(issue.path);
    switch (issue.code) {
      case "unrecognized_keys":
        // One finding per key, each pointing at the offending key; the message carries the allowed keys.
        return issue.keys.map((key) => ({
          path: [...path, key],
          anchor: "key",
          message: `unknown key "${key}"; ${issue.message}`,
        }));
      case "invalid_type": {
        const expected = EXPECTED_NAMES[issue.expected] ?? issue.expected;
        if (issue.input === undefined) {
          return [{ path, message: `missing required field "${String(path.at(-1) ?? "")}"` }];
        }
        return [{ path, message: `expected ${expected}, got ${describeInput(issue.input)}` }];
      }
      case "invalid_value": {
        const allowed = issue.values.map((value) => String(value)).join(", ");
        return [
          { path, message: `invalid value ${JSON.stringify(issue.input)}; allowed values: ${allowed}` },
        ];
      }
      default:
        // too_small and custom issues carry the messages written in yaml-schema.ts.
        return [{ path, message: issue.message }];
    }
  });
}

import { SPECIAL_VARIABLES, templateVariablesIn } from "../templates/index.ts";
import type { Finding, PathSegment } from "./problems.ts";
import type { RawMapping } from "./raw.ts";
import { isMapping } from "./raw.ts";

const ALLOWED_IN_INIT: readonly string[] = SPECIAL_VARIABLES;

/** Init steps run once per batch, so per-member columns and worker outputs cannot exist for them. */
export function initTemplateFindings(step: RawMapping, path: PathSegment[]): Finding[] {
  const findings: Finding[] = [];
  const visit = (value: unknown, at: PathSegment[]): void => {
    if (typeof value === "string") {
      const invalid = templateVariablesIn(value).filter((name) => !ALLOWED_IN_INIT.includes(name));
      if (invalid.length > 0) {
        const names = invalid.map((name) => `{{${name}}}`).join(", ");
        findings.push({
          path: at,
          message: `init steps may only use {{_batch_id}} and {{_batch_start_time}}; found ${names}`,
        });
      }
    } else if (Array.isArray(value)) value.forEach((item, index) => visit(item, [...at, index]));
    else if (isMapping(value)) for (const [key, item] of Object.entries(value)) visit(item, [...at, key]);
  };
  visit(step.function, [...path, "function"]);
  visit(step.params, [...path, "params"]);
  return findings;
}

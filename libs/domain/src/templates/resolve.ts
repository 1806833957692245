import type { StepDefinition } from "../runbook/model.ts";
import { TemplateResolutionError } from "./errors.ts";
import { soleTemplateName, templatePattern } from "./syntax.ts";
import type { TemplateVariables } from "./variables.ts";

/** Plain substitution only: a name is looked up as an own property, never evaluated. */
function lookup(variables: TemplateVariables, name: string): { found: boolean; value?: unknown } {
  if (!Object.hasOwn(variables, name) || variables[name] === undefined) return { found: false };
  return { found: true, value: variables[name] };
}

/** How a value reads inside a larger string: scalars as text, lists/maps as JSON. */
function embed(value: unknown): string {
  if (value === null) return "";
  if (typeof value === "string") return value;
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

function substitute(text: string, variables: TemplateVariables, missing: Set<string>): string {
  if (!text.includes("{{")) return text; // most values hold no template: skip the regex
  return text.replace(templatePattern(), (placeholder, name: string) => {
    const { found, value } = lookup(variables, name);
    if (found) return embed(value);
    missing.add(name);
    return placeholder;
  });
}

function resolveValue(value: unknown, variables: TemplateVariables, missing: Set<string>): unknown {
  if (typeof value === "string") {
    // A value that is exactly one template keeps the variable's native type (lists stay lists).
    const sole = soleTemplateName(value);
    if (sole === undefined) return substitute(value, variables, missing);
    const { found, value: resolved } = lookup(variables, sole);
    if (!found) missing.add(sole);
    // Cloned so callers mutating resolved params cannot alter the member's data (a string or a
    // number cannot be mutated: not cloned, which a plan of 100,000 members does 600,000 times).
    if (!found) return value;
    return typeof resolved === "object" && resolved !== null ? structuredClone(resolved) : resolved;
  }
  if (Array.isArray(value)) return value.map((item) => resolveValue(item, variables, missing));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, resolveValue(item, variables, missing)]),
    );
  }
  return value;
}

function throwIfMissing(missing: Set<string>): void {
  if (missing.size > 0) throw new TemplateResolutionError(missing);
}

export function resolveTemplateString(text: string, variables: TemplateVariables): string {
  const missing = new Set<string>();
  const resolved = substitute(text, variables, missing);
  throwIfMissing(missing);
  return resolved;
}

export function resolveParams(
  params: Readonly<Record<string, unknown>>,
  variables: TemplateVariables,
): Record<string, unknown> {
  const missing = new Set<string>();
  const resolved = resolveValue(params, variables, missing) as Record<string, unknown>;
  throwIfMissing(missing);
  return resolved;
}

export interface ResolvedStep {
  functionName: string;
  params: Record<string, unknown>;
}

/**
 * The step with every template that can resolve substituted, the others left as written, and
 * the names that were missing (sorted, unique; empty when everything resolved). resolveStep and
 * the orchestrator's execution preparation (runbook/prepare-step.ts) are this with a throw; the
 * dry-run plan (runbook/plan.ts) reads `missing` instead.
 */
export function resolveStepPartially(
  step: Pick<StepDefinition, "function" | "params">,
  variables: TemplateVariables,
): ResolvedStep & { missing: string[] } {
  const missing = new Set<string>();
  const functionName = substitute(step.function, variables, missing);
  const params = resolveValue(step.params, variables, missing) as Record<string, unknown>;
  return { functionName, params, missing: [...missing].sort() };
}

/** Resolves the function name and params together so one error lists every missing variable. */
export function resolveStep(
  step: Pick<StepDefinition, "function" | "params">,
  variables: TemplateVariables,
): ResolvedStep {
  const missing = new Set<string>();
  const functionName = substitute(step.function, variables, missing);
  const params = resolveValue(step.params, variables, missing) as Record<string, unknown>;
  throwIfMissing(missing);
  return { functionName, params };
}

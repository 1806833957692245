import { NonRetriableError } from "../errors/matoolkit-error.ts";
import { reasonCodes } from "../errors/reason-codes.ts";
import type { ForEachClause } from "./model.ts";

/**
 * `for_each:` at run time (issue 30; docs/runbook-for-each.md): the values a member's step runs
 * for, read when the step's turn comes (so an earlier step's output is known).
 */

/** The most values one step expands to for one member: above it the member fails (for_each.too_many). */
export const MAX_FOR_EACH_VALUES = 1_000;

/** The variable a for_each step's params read its value from. */
export const FOR_EACH_ITEM_VARIABLE = "item";

/** Why a member's for_each step cannot be expanded (its reason code). */
export type ForEachProblem = typeof reasonCodes.forEachTooMany | typeof reasonCodes.forEachNotAList;

/** The step cannot be expanded for the member; its message names the list, never a value (PII). */
export class ForEachError extends NonRetriableError {
  readonly problem: ForEachProblem;

  constructor(problem: ForEachProblem, message: string) {
    super(problem, message);
    this.problem = problem;
  }
}

export type ForEachValues =
  | { readonly ok: true; readonly items: readonly unknown[] }
  | { readonly ok: false; readonly error: ForEachError };

/**
 * The member's values of the clause's list. A name the member does not have, or null, is no values
 * (a multi-valued cell that is empty, a step that found nothing and left no output), as a `when:`
 * reads it as empty; anything but a list fails the step, as do more than MAX_FOR_EACH_VALUES.
 */
export function forEachValues(
  clause: ForEachClause,
  variables: Readonly<Record<string, unknown>>,
): ForEachValues {
  const value = Object.hasOwn(variables, clause.name) ? variables[clause.name] : undefined;
  if (value === undefined || value === null) return { ok: true, items: [] };
  if (!Array.isArray(value))
    return {
      ok: false,
      error: new ForEachError(
        reasonCodes.forEachNotAList,
        `for_each: {{${clause.name}}} is not a list for this member (${describe(value)})`,
      ),
    };
  if (value.length > MAX_FOR_EACH_VALUES)
    return {
      ok: false,
      error: new ForEachError(
        reasonCodes.forEachTooMany,
        `for_each: {{${clause.name}}} has ${value.length} values; a step expands to at most ${MAX_FOR_EACH_VALUES}`,
      ),
    };
  return { ok: true, items: value as unknown[] };
}

/** The kind of a value, never the value itself. */
function describe(value: unknown): string {
  if (typeof value === "object") return "a map";
  return `a ${typeof value}`;
}

/** `add-to-group [2/5]`: how read models and events name one value's execution (1-based). */
export function itemLabel(
  stepName: string,
  item: { readonly itemIndex?: number | null; readonly itemCount?: number | null },
): string {
  if (item.itemCount === null || item.itemCount === undefined) return stepName;
  return `${stepName} [${(item.itemIndex ?? 0) + 1}/${item.itemCount}]`;
}

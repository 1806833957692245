import type { ComparisonOperator, Literal, Operand, Reference } from "./syntax.ts";
import { ConditionSyntaxError } from "./tokens.ts";

/**
 * The type rules of conditions, checked at parse time (so at publish). A reference's type is only
 * known at run time (a column or an output holds whatever the source or the worker gave), so the
 * rules are about what the author wrote: a test needs at least one reference (a test of fixed
 * values alone always gives the same answer), true/false cannot be ordered, and a list holds
 * values of one type.
 */

/** How an operand reads in a message. */
export function show(operand: Operand): string {
  if (operand.kind === "reference") return `{{${operand.name}}}`;
  return operand.type === "text" ? `'${String(operand.value)}'` : String(operand.value);
}

export function checkComparison(
  operator: ComparisonOperator,
  left: Operand,
  right: Operand,
  at: number,
): void {
  if (left.kind === "literal" && right.kind === "literal")
    throw new ConditionSyntaxError(
      at,
      `${show(left)} ${operator} ${show(right)} compares two fixed values: one side must be a {{reference}}`,
    );
  const ordered = operator !== "==" && operator !== "!=";
  for (const side of [left, right]) {
    if (ordered && side.kind === "literal" && side.type === "boolean")
      throw new ConditionSyntaxError(
        side.at,
        `${show(side)} cannot be ordered with ${operator}: use == or !=`,
      );
  }
}

export function checkEmptyTest(operand: Operand, at: number): Reference {
  if (operand.kind === "reference") return operand;
  throw new ConditionSyntaxError(at, `${show(operand)} is a fixed value: test a {{reference}} for emptiness`);
}

export function checkMembership(operand: Operand, list: readonly Literal[], at: number): void {
  if (operand.kind === "literal")
    throw new ConditionSyntaxError(at, `${show(operand)} is a fixed value: test a {{reference}} with in`);
  const first = list[0]!;
  const mixed = list.find((item) => item.type !== first.type);
  if (mixed !== undefined)
    throw new ConditionSyntaxError(
      mixed.at,
      `a list holds values of one type: ${show(mixed)} is ${article(mixed.type)}, ${show(first)} ${article(first.type)}`,
    );
}

function article(type: Literal["type"]): string {
  return type === "text" ? "text" : type === "number" ? "a number" : "a boolean";
}

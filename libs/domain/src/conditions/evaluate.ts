import { NonRetriableError, reasonCodes } from "../errors/index.ts";
import type { TemplateVariables } from "../templates/variables.ts";
import type { ComparisonOperator, Condition, Literal, Operand } from "./syntax.ts";
import { show } from "./types.ts";

/**
 * A condition that cannot be decided for this member (a value ordered against a number is not a
 * number). The message names the reference, never its value: member data is PII.
 */
export class ConditionEvaluationError extends NonRetriableError {
  constructor(message: string) {
    super(reasonCodes.conditionInvalid, message);
  }
}

/**
 * Decides a parsed condition against a member's variables (buildTemplateVariables: columns,
 * earlier outputs, specials). Semantics (docs/runbook-conditions.md):
 * - a name the member does not have reads as empty (a step that found nothing left no output);
 * - beside a text literal a value compares as the text a template would put in its place
 *   (null and missing: ''); beside a number as a number (numeric text counts); beside true/false
 *   as a boolean ('true'/'false' text counts, any case). A value of the wrong kind is simply not
 *   equal; ordering it against a number throws ConditionEvaluationError;
 * - two references: equal when their texts are; ordered as numbers when both are, else as text;
 * - `and`/`or` stop at the first side that decides, so `{{Q}} is not empty and {{Q}} > 5` is safe.
 */
export function evaluateCondition(condition: Condition, variables: TemplateVariables): boolean {
  switch (condition.kind) {
    case "and":
      return evaluateCondition(condition.left, variables) && evaluateCondition(condition.right, variables);
    case "or":
      return evaluateCondition(condition.left, variables) || evaluateCondition(condition.right, variables);
    case "not":
      return !evaluateCondition(condition.operand, variables);
    case "constant":
      return condition.value;
    case "empty":
      return isEmpty(valueOf(condition.operand, variables)) !== condition.negated;
    case "in": {
      const found = condition.list.some((item) => compare("==", condition.operand, item, variables));
      return found !== condition.negated;
    }
    case "compare":
      return compare(condition.operator, condition.left, condition.right, variables);
  }
}

function compare(
  operator: ComparisonOperator,
  left: Operand,
  right: Operand,
  variables: TemplateVariables,
): boolean {
  // The parser refuses two literals, so at least one side is a reference.
  const literal: Literal | undefined =
    left.kind === "literal" ? left : right.kind === "literal" ? right : undefined;
  const a = valueOf(left, variables);
  const b = valueOf(right, variables);
  if (literal === undefined) {
    const [x, y] = [asNumber(a), asNumber(b)];
    if (operator !== "==" && operator !== "!=" && x !== undefined && y !== undefined)
      return order(operator, x, y);
    return order(operator, asText(a), asText(b));
  }
  const convert = literal.type === "number" ? asNumber : literal.type === "boolean" ? asBoolean : asText;
  const [x, y] = [convert(a), convert(b)];
  if (x !== undefined && y !== undefined) return order(operator, x, y);
  if (operator === "==") return false;
  if (operator === "!=") return true;
  const reference = left.kind === "reference" ? left : right;
  throw new ConditionEvaluationError(
    `${show(reference)} is not a number, so ${show(left)} ${operator} ${show(right)} cannot be decided`,
  );
}

function order<T extends string | number | boolean>(operator: ComparisonOperator, x: T, y: T): boolean {
  switch (operator) {
    case "==":
      return x === y;
    case "!=":
      return x !== y;
    case "<":
      return x < y;
    case "<=":
      return x <= y;
    case ">":
      return x > y;
    case ">=":
      return x >= y;
  }
}

/** Own properties only, as templates: `{{constructor}}` is just a missing name. */
function valueOf(operand: Operand, variables: TemplateVariables): unknown {
  if (operand.kind === "literal") return operand.value;
  return Object.hasOwn(variables, operand.name) ? variables[operand.name] : undefined;
}

function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null || value === "") return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === "object" && !(value instanceof Date)) return Object.keys(value).length === 0;
  return false;
}

/** The text a template would put in the value's place (templates/resolve.ts `embed`). */
function asText(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

const NUMERIC = /^\s*-?\d+(\.\d+)?\s*$/;

function asNumber(value: unknown): number | undefined {
  if (typeof value === "number") return Number.isFinite(value) ? value : undefined;
  if (typeof value === "string" && NUMERIC.test(value)) return Number(value);
  return undefined;
}

function asBoolean(value: unknown): boolean | undefined {
  if (typeof value === "boolean") return value;
  if (typeof value !== "string") return undefined;
  const word = value.trim().toLowerCase();
  return word === "true" ? true : word === "false" ? false : undefined;
}

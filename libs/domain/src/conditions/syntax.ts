/**
 * The `when:` condition language of runbook steps and phases (issue 30): what a parsed condition
 * is, and the bounds that keep parsing and evaluating it cheap. The grammar is in parse.ts and
 * docs/runbook-conditions.md; nothing here is ever evaluated as code.
 */

/** Longest condition accepted, in characters: a condition is a line of text, not a program. */
export const MAX_CONDITION_LENGTH = 1000;
/** Deepest nesting of `(` and `not`: the parser recurses once per level. */
export const MAX_CONDITION_DEPTH = 32;
/** Most values in one `in [...]` list. */
export const MAX_LIST_ITEMS = 100;

/** A fixed value written in the condition: `'text'`, `12`, `-1.5`, `true`. */
export interface Literal {
  readonly kind: "literal";
  readonly type: "text" | "number" | "boolean";
  readonly value: string | number | boolean;
  /** 0-based offset of its first character in the condition text. */
  readonly at: number;
}

/** `{{Name}}`: a member column, an earlier step's output or a special variable, looked up by name. */
export interface Reference {
  readonly kind: "reference";
  readonly name: string;
  readonly at: number;
}

export type Operand = Literal | Reference;

export type ComparisonOperator = "==" | "!=" | "<" | "<=" | ">" | ">=";

export type Condition =
  | { readonly kind: "and" | "or"; readonly left: Condition; readonly right: Condition }
  | { readonly kind: "not"; readonly operand: Condition }
  | {
      readonly kind: "compare";
      readonly operator: ComparisonOperator;
      readonly left: Operand;
      readonly right: Operand;
    }
  | {
      readonly kind: "in";
      readonly operand: Operand;
      readonly list: readonly Literal[];
      readonly negated: boolean;
    }
  | { readonly kind: "empty"; readonly operand: Reference; readonly negated: boolean }
  | { readonly kind: "constant"; readonly value: boolean };

/** A problem in a condition's text, at the offset of the character it is about. */
export interface ConditionProblem {
  /** 0-based offset into the condition text. */
  readonly offset: number;
  readonly message: string;
}

export type ParsedCondition =
  | {
      readonly ok: true;
      readonly condition: Condition;
      /** Every `{{Name}}` in order of appearance (a name may appear more than once). */
      readonly references: readonly Reference[];
    }
  | { readonly ok: false; readonly problem: ConditionProblem };

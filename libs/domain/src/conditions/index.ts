export { ConditionEvaluationError, evaluateCondition } from "./evaluate.ts";
export { parseCondition } from "./parse.ts";
export { MAX_CONDITION_DEPTH, MAX_CONDITION_LENGTH, MAX_LIST_ITEMS } from "./syntax.ts";
export type { Condition, ConditionProblem, ParsedCondition } from "./syntax.ts";

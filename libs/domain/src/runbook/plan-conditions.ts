import { ConditionEvaluationError, evaluateCondition } from "../conditions/evaluate.ts";
import type { WhenClause } from "./model.ts";

/**
 * What the dry-run plan says of a step's `when:` (issue 30), decided from the member's data as the
 * orchestrator would decide it (its phase's clause first, then its own; the first false skips, an
 * undecidable one before that fails the step with condition.invalid):
 * - `always`: no condition;
 * - `runs` / `skipped`: decided from the member's data alone;
 * - `at_run_time`: it reads an earlier step's output or `{{_batch_id}}`, known once the batch runs;
 * - `invalid`: it cannot be decided for this member (the step would fail with condition.invalid).
 */
export type WhenDecision = "always" | "runs" | "skipped" | "at_run_time" | "invalid";

export function decideWhen(
  clauses: readonly WhenClause[],
  variables: Readonly<Record<string, unknown>>,
  atRunTime: (name: string) => boolean,
): WhenDecision {
  if (clauses.length === 0) return "always";
  let pending = false;
  for (const clause of clauses) {
    if (clause.references.some(atRunTime)) {
      pending = true;
      continue;
    }
    try {
      // False skips the step whatever an earlier pending clause turns out to be.
      if (!evaluateCondition(clause.condition, variables)) return "skipped";
    } catch (error) {
      if (!(error instanceof ConditionEvaluationError)) throw error;
      // A pending clause before it may still skip the step first.
      return pending ? "at_run_time" : "invalid";
    }
  }
  return pending ? "at_run_time" : "runs";
}

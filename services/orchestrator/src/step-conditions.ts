import {
  ConditionEvaluationError,
  evaluateCondition,
  type RunbookDefinition,
  type WhenClause,
} from "@matoolkit/domain";

/**
 * `when:` at dispatch (issue 30): whether a member's step runs, decided when its turn comes, so
 * the outputs of its earlier steps are known. The clauses come from the runbook version that
 * created the step (the phase's), looked up by phase name and step index: the rows stay as they
 * were, and a runbook without conditions costs one cached lookup per group of results.
 */
export type StepVerdict =
  | { readonly kind: "run" }
  | { readonly kind: "skip"; readonly reason: string }
  | { readonly kind: "invalid"; readonly error: ConditionEvaluationError };

const RUN: StepVerdict = { kind: "run" };

/** Its phase's clause first (it applies to each step of the phase), then the step's own. */
export function clausesOf(
  runbook: RunbookDefinition,
  phaseName: string,
  step: { readonly stepIndex: number; readonly stepName: string },
): { readonly scope: "phase" | "step"; readonly clause: WhenClause }[] {
  const phase = runbook.phases.find((candidate) => candidate.name === phaseName);
  if (phase === undefined) return [];
  const definition = phase.steps[step.stepIndex];
  const own = definition?.name === step.stepName ? definition.when : undefined;
  return [
    ...(phase.when === undefined ? [] : [{ scope: "phase" as const, clause: phase.when }]),
    ...(own === undefined ? [] : [{ scope: "step" as const, clause: own }]),
  ];
}

/**
 * Decided on a step's first attempt only (retry_count 0; a redrive resets it): a retry re-sends a
 * step whose condition already held, and must not turn into a skip halfway through its retries.
 * The reason names the clause, never a member's value (events are read by every role).
 */
export function decideStep(
  clauses: ReturnType<typeof clausesOf>,
  step: { readonly retryCount: number },
  variables: () => Readonly<Record<string, unknown>>,
): StepVerdict {
  if (clauses.length === 0 || step.retryCount > 0) return RUN;
  const known = variables();
  for (const { scope, clause } of clauses) {
    try {
      if (!evaluateCondition(clause.condition, known))
        return {
          kind: "skip",
          reason: `${scope === "phase" ? "phase when" : "when"}: ${clause.expression} is false`,
        };
    } catch (error) {
      if (!(error instanceof ConditionEvaluationError)) throw error;
      return { kind: "invalid", error };
    }
  }
  return RUN;
}

import {
  forEachValues,
  type ForEachClause,
  type ForEachError,
  type RunbookDefinition,
} from "@matoolkit/domain";

/**
 * `for_each:` at dispatch (issue 30; docs/runbook-for-each.md): what a member's for_each step
 * becomes when its turn comes (after its `when:` held), so an earlier step's output list is known.
 * The clause comes from the runbook version that created the step, found by phase name and step
 * index as clausesOf finds `when:`.
 */
export type ExpansionVerdict =
  /** Not a for_each step, or expanded already: its rows run as they are. */
  | { readonly kind: "run" }
  | { readonly kind: "expand"; readonly items: readonly unknown[] }
  /** No values: the step is skipped, as a false `when:` skips it. */
  | { readonly kind: "skip"; readonly reason: string }
  | { readonly kind: "invalid"; readonly error: ForEachError };

const RUN: ExpansionVerdict = { kind: "run" };

export function forEachOf(
  runbook: RunbookDefinition | undefined,
  phaseName: string,
  step: { readonly stepIndex: number; readonly stepName: string },
): ForEachClause | undefined {
  const definition = runbook?.phases.find((phase) => phase.name === phaseName)?.steps[step.stepIndex];
  return definition?.name === step.stepName ? definition.forEach : undefined;
}

/**
 * Expanded once: a row with an item_count has its value (and its siblings) already, so a retry,
 * a redrive or a second delivery runs it as it is and never reads the list again.
 */
export function decideExpansion(
  clause: ForEachClause | undefined,
  step: { readonly itemCount: number | null },
  variables: () => Readonly<Record<string, unknown>>,
): ExpansionVerdict {
  if (clause === undefined || step.itemCount !== null) return RUN;
  const values = forEachValues(clause, variables());
  if (!values.ok) return { kind: "invalid", error: values.error };
  if (values.items.length === 0)
    return { kind: "skip", reason: `for_each: ${clause.expression} has no values` };
  return { kind: "expand", items: values.items };
}

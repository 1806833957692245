import { parseCondition } from "../conditions/parse.ts";
import { SPECIAL_VARIABLES } from "../templates/variables.ts";
import type { Finding, PathSegment } from "./problems.ts";
import { formatPath } from "./problems.ts";
import type { RawMapping } from "./raw.ts";
import { asList, isMapping, stepListsOf } from "./raw.ts";

/**
 * `when:` conditions (issue 30) at publish: each must parse (its problem at the character it is
 * about), and every `{{Name}}` it reads must exist when the condition is decided: a column the
 * data source declares (`columns`, the primary key and the other columns it names), a special
 * variable, or an output of a step that runs before — an earlier step of the phase, or any step
 * of an earlier phase (outputs accumulate per member across phases). A phase's condition is
 * decided with each of its steps, so it may read outputs of earlier phases only. Only phase steps
 * take `when:`: init, on_member_removed and rollback steps always run when they are reached.
 */
export function whenFindings(root: RawMapping): Finding[] {
  const findings: Finding[] = [];
  for (const list of stepListsOf(root)) {
    if (list.kind === "phase") continue;
    list.steps.forEach((step, index) => {
      if (isMapping(step) && step.when !== undefined)
        findings.push({
          path: [...list.path, index, "when"],
          anchor: "key",
          message: `when: is only for phase steps and phases; ${list.kind} steps always run when reached`,
        });
    });
  }
  const columns = declaredColumns(root.data_source);
  const producers = outputProducers(root);
  const known = new Set<string>([...columns, ...SPECIAL_VARIABLES]);
  const scope = { columns, producers, known };
  asList(root.phases).forEach((phase, phaseIndex) => {
    if (!isMapping(phase)) return;
    const phasePath = ["phases", phaseIndex];
    findings.push(...conditionFindings(phase.when, [...phasePath, "when"], scope, "this phase"));
    const earlier = new Set(known);
    asList(phase.steps).forEach((step, stepIndex) => {
      if (!isMapping(step)) return;
      const stepPath = [...phasePath, "steps", stepIndex];
      const stepScope = { ...scope, known: earlier, self: formatPath(stepPath) };
      findings.push(...conditionFindings(step.when, [...stepPath, "when"], stepScope, "this step"));
      for (const name of outputNames(step)) earlier.add(name);
    });
    for (const name of earlier) known.add(name);
  });
  return findings;
}

interface Scope {
  readonly columns: readonly string[];
  /** Output name → the first step (its path) whose output_params has it. */
  readonly producers: ReadonlyMap<string, { step: string; path: string }>;
  readonly known: ReadonlySet<string>;
  /** The path of the step the condition is on (a step's own output is decided too late). */
  readonly self?: string;
}

function conditionFindings(
  expression: unknown,
  path: PathSegment[],
  scope: Scope,
  subject: string,
): Finding[] {
  if (typeof expression !== "string") return []; // absent, or the wrong type (zod reports it)
  const parsed = parseCondition(expression);
  if (!parsed.ok) return [{ path, offset: parsed.problem.offset, message: parsed.problem.message }];
  const reported = new Set<string>();
  const findings: Finding[] = [];
  for (const reference of parsed.references) {
    if (scope.known.has(reference.name) || reported.has(reference.name)) continue;
    reported.add(reference.name);
    findings.push({ path, offset: reference.at, message: unknownMessage(reference.name, scope, subject) });
  }
  return findings;
}

function unknownMessage(name: string, scope: Scope, subject: string): string {
  const producer = scope.producers.get(name);
  if (producer !== undefined && producer.path === scope.self)
    return `{{${name}}} is an output of this step: its condition is decided before it runs`;
  if (producer !== undefined)
    return `{{${name}}} is an output of step "${producer.step}" (${producer.path}), which does not run before ${subject}`;
  const declared = scope.columns.length > 0 ? `; declared: ${scope.columns.join(", ")}` : "";
  return (
    `{{${name}}} is neither a column the data source declares nor an output of an earlier step ` +
    `(list the column in data_source.columns${declared})`
  );
}

/** primary_key, batch_time_column, multi_valued_columns, secret_columns and columns. */
function declaredColumns(source: unknown): string[] {
  if (!isMapping(source)) return [];
  const names = [
    source.primary_key,
    source.batch_time_column,
    ...asList(source.multi_valued_columns).map((column) => (isMapping(column) ? column.name : undefined)),
    ...asList(source.secret_columns),
    ...asList(source.columns),
  ];
  return [...new Set(names.filter((name): name is string => typeof name === "string"))];
}

function outputProducers(root: RawMapping): Map<string, { step: string; path: string }> {
  const producers = new Map<string, { step: string; path: string }>();
  asList(root.phases).forEach((phase, phaseIndex) => {
    if (!isMapping(phase)) return;
    asList(phase.steps).forEach((step, stepIndex) => {
      if (!isMapping(step)) return;
      const path = formatPath(["phases", phaseIndex, "steps", stepIndex]);
      for (const name of outputNames(step)) {
        if (!producers.has(name)) producers.set(name, { step: String(step.name), path });
      }
    });
  });
  return producers;
}

function outputNames(step: RawMapping): string[] {
  return isMapping(step.output_params) ? Object.keys(step.output_params) : [];
}

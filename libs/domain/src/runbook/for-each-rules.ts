import { soleTemplateName } from "../templates/syntax.ts";
import type { Finding, PathSegment } from "./problems.ts";
import type { RawMapping } from "./raw.ts";
import { asList, isMapping, stepListsOf } from "./raw.ts";

/**
 * `for_each:` at publish (issue 30; docs/runbook-for-each.md). It must be exactly one `{{Name}}`
 * naming one list known when the step's turn comes: a column of data_source.multi_valued_columns
 * (parsed into a list per member), or an output of a step that runs before (an earlier step of the
 * phase, or any step of an earlier phase), which is a list at run time or fails the member
 * (for_each.not_a_list). Each problem points at its character inside the text, like `when:`'s. A
 * for_each step takes no output_params: its executions would overwrite each other's outputs.
 */
export function forEachFindings(root: RawMapping): Finding[] {
  const findings: Finding[] = [];
  for (const list of stepListsOf(root)) {
    if (list.kind === "phase") continue;
    list.steps.forEach((step, index) => {
      if (isMapping(step) && step.for_each !== undefined)
        findings.push({
          path: [...list.path, index, "for_each"],
          anchor: "key",
          message: `for_each: is only for phase steps; ${list.kind} steps run once`,
        });
    });
  }
  const lists = multiValuedColumns(root.data_source);
  const columns = otherColumns(root.data_source);
  const known = new Set<string>();
  asList(root.phases).forEach((phase, phaseIndex) => {
    if (!isMapping(phase)) return;
    asList(phase.steps).forEach((step, stepIndex) => {
      if (!isMapping(step)) return;
      const path = ["phases", phaseIndex, "steps", stepIndex];
      if (step.for_each !== undefined) {
        const scope = { lists, columns, outputs: known, own: outputNames(step) };
        findings.push(...clauseFindings(step.for_each, [...path, "for_each"], scope));
        if (outputNames(step).length > 0)
          findings.push({
            path: [...path, "output_params"],
            anchor: "key",
            message:
              "a for_each step cannot have output_params: its executions (one per value) would overwrite each other's outputs",
          });
      }
      for (const name of outputNames(step)) known.add(name);
    });
  });
  return findings;
}

interface Scope {
  readonly lists: ReadonlySet<string>;
  readonly columns: ReadonlySet<string>;
  /** Outputs of the steps that run before this one. */
  readonly outputs: ReadonlySet<string>;
  readonly own: readonly string[];
}

function clauseFindings(expression: unknown, path: PathSegment[], scope: Scope): Finding[] {
  if (typeof expression !== "string") return []; // the wrong type: zod reports it
  const name = soleTemplateName(expression.trim());
  if (name === undefined)
    return [
      {
        path,
        offset: 0,
        message:
          'for_each must be exactly one {{Name}}: a multi-valued column or an earlier step\'s output (e.g. "{{Groups}}")',
      },
    ];
  if (scope.lists.has(name) || scope.outputs.has(name)) return [];
  const offset = Math.max(0, expression.indexOf(name));
  return [{ path, offset, message: unknownMessage(name, scope) }];
}

function unknownMessage(name: string, scope: Scope): string {
  if (scope.own.includes(name))
    return `{{${name}}} is an output of this step: its values are needed before it runs`;
  if (scope.columns.has(name))
    return `{{${name}}} is a single-valued column; list it in data_source.multi_valued_columns to run a step per value`;
  const declared = scope.lists.size > 0 ? `; multi-valued columns: ${[...scope.lists].join(", ")}` : "";
  return (
    `{{${name}}} is neither a multi-valued column nor an output of an earlier step ` +
    `(declare it in data_source.multi_valued_columns${declared})`
  );
}

function multiValuedColumns(source: unknown): Set<string> {
  if (!isMapping(source)) return new Set();
  const names = asList(source.multi_valued_columns).map((column) =>
    isMapping(column) ? column.name : undefined,
  );
  return new Set(names.filter((name): name is string => typeof name === "string"));
}

function otherColumns(source: unknown): Set<string> {
  if (!isMapping(source)) return new Set();
  const names = [
    source.primary_key,
    source.batch_time_column,
    ...asList(source.secret_columns),
    ...asList(source.columns),
  ];
  return new Set(names.filter((name): name is string => typeof name === "string"));
}

function outputNames(step: RawMapping): string[] {
  return isMapping(step.output_params) ? Object.keys(step.output_params) : [];
}

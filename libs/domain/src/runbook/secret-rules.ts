import type { Finding, PathSegment } from "./problems.ts";
import type { RawMapping } from "./raw.ts";
import { asList, isMapping, stepListsOf } from "./raw.ts";

/**
 * What the explicit secret markers name must exist, so a typo never leaves a secret in clear:
 * `secret_params` names params of its own step; `secret_columns` never names the primary key
 * (its value is the member key, which every read shows to identify the member). Shapes (a list
 * of non-empty names) are zod's (yaml-schema.ts).
 */
export function secretMarkerFindings(root: RawMapping): Finding[] {
  const findings: Finding[] = [];
  if (isMapping(root.data_source)) findings.push(...secretColumnFindings(root.data_source));
  for (const list of stepListsOf(root)) {
    list.steps.forEach((step, index) => {
      if (isMapping(step)) findings.push(...secretParamFindings(step, [...list.path, index]));
    });
  }
  return findings;
}

function secretColumnFindings(source: RawMapping): Finding[] {
  const path: PathSegment[] = ["data_source", "secret_columns"];
  return [
    ...duplicateFindings(source.secret_columns, path, "secret column"),
    ...asList(source.secret_columns).flatMap((name, index): Finding[] =>
      name === source.primary_key
        ? [
            {
              path: [...path, index],
              message:
                `the primary key "${name}" cannot be a secret column: its value is the member key ` +
                "that every read shows to identify the member",
            },
          ]
        : [],
    ),
  ];
}

function secretParamFindings(step: RawMapping, stepPath: PathSegment[]): Finding[] {
  const path = [...stepPath, "secret_params"];
  const params = isMapping(step.params) ? Object.keys(step.params) : [];
  const known = params.length > 0 ? `its params: ${params.join(", ")}` : "the step has no params";
  return [
    ...duplicateFindings(step.secret_params, path, "secret param"),
    ...asList(step.secret_params).flatMap((name, index): Finding[] =>
      typeof name !== "string" || params.includes(name)
        ? []
        : [
            {
              path: [...path, index],
              message: `secret_params names "${name}", not a param of this step; ${known}`,
            },
          ],
    ),
  ];
}

function duplicateFindings(list: unknown, path: PathSegment[], what: string): Finding[] {
  const seen = new Set<unknown>();
  return asList(list).flatMap((name, index): Finding[] => {
    if (!seen.has(name)) {
      seen.add(name);
      return [];
    }
    return [{ path: [...path, index], message: `duplicate ${what} "${String(name)}"` }];
  });
}

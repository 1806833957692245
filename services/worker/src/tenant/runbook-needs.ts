import type { TenantCheckStep } from "@matoolkit/domain";
import { needsOf, standardFunctionNeeds } from "./function-permissions.ts";

/** A domain a runbook writes into the target tenant, and where it was read. */
export interface RequiredDomain {
  readonly domain: string;
  /** `phase/step Param`, for the line that names it. */
  readonly sources: readonly string[];
}

export interface RunbookTenantNeeds {
  /** Standard functions the runbook calls (their permissions are checked). */
  readonly functions: readonly string[];
  /** Function names that are not standard or are templated: their needs are not known here. */
  readonly unchecked: readonly string[];
  readonly domains: readonly RequiredDomain[];
  /** Target-domain params whose domain only member data or a step's output decides. */
  readonly undeterminedDomains: readonly string[];
}

const template = /\{\{[^}]*\}\}/u;

/**
 * What a runbook needs of its target tenant, read from its steps before any member exists: the
 * standard functions it calls and the domains of the target-tenant addresses its params write
 * (`targetDomainParams` of function-permissions.ts). A domain can be named only where the value
 * fixes it: a literal (`ops@fabrikam.com`) or a template whose part after `@` is literal
 * (`{{Alias}}@fabrikam.com`). `{{TargetUPN}}` comes from member data: said, not guessed.
 */
export function runbookTenantNeeds(steps: readonly TenantCheckStep[] | undefined): RunbookTenantNeeds {
  if (steps === undefined) {
    return {
      functions: Object.keys(standardFunctionNeeds),
      unchecked: [],
      domains: [],
      undeterminedDomains: [],
    };
  }
  const functions = new Set<string>();
  const unchecked = new Set<string>();
  const domains = new Map<string, string[]>();
  const undetermined: string[] = [];
  for (const step of steps) {
    const needs = needsOf(step.function);
    if (needs === undefined) {
      unchecked.add(template.test(step.function) ? `${step.function} (name from a template)` : step.function);
      continue;
    }
    functions.add(step.function);
    for (const param of needs.targetDomainParams) {
      const value = step.params[param];
      if (typeof value !== "string" || value.trim() === "") continue;
      const source = `${step.step} ${param}`;
      const at = value.lastIndexOf("@");
      const domain =
        at < 0
          ? undefined
          : value
              .slice(at + 1)
              .trim()
              .toLowerCase();
      if (domain === undefined || domain === "" || template.test(domain)) {
        undetermined.push(source);
        continue;
      }
      domains.set(domain, [...(domains.get(domain) ?? []), source]);
    }
  }
  return {
    functions: [...functions].sort(),
    unchecked: [...unchecked].sort(),
    domains: [...domains].map(([domain, sources]) => ({ domain, sources })),
    undeterminedDomains: undetermined,
  };
}

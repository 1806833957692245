import { resolveStepPartially } from "../templates/resolve.ts";
import type { TemplateVariables } from "../templates/variables.ts";
import { resolveEffectiveRetry } from "./effective-retry.ts";
import { FOR_EACH_ITEM_VARIABLE } from "./for-each.ts";
import type { RunbookDefinition, StepDefinition } from "./model.ts";

/**
 * Column values shared by new step and init executions, resolved from the runbook step at
 * creation (000: templates resolve at phase dispatch time; retry config is stored on the row).
 * Lives in the domain (moved from the orchestrator's prepare-execution.ts) so the admin API's
 * dry-run plan resolves templates with exactly the code that creates the executions.
 */
export interface PreparedExecution {
  readonly stepName: string;
  readonly stepIndex: number;
  readonly workerId: string;
  readonly functionName: string;
  readonly paramsJson: Record<string, unknown>;
  /** false: params still hold templates that wait for a worker output of an earlier step. */
  readonly paramsResolved: boolean;
  readonly isPollStep: boolean;
  readonly pollIntervalSec: number | null;
  readonly pollTimeoutSec: number | null;
  readonly onFailure: string | null;
  readonly maxRetries: number;
  readonly retryIntervalSec: number | null;
  readonly timeoutSec: number | null;
}

export function prepareStepExecution(
  step: StepDefinition,
  stepIndex: number,
  runbook: RunbookDefinition,
  variables: TemplateVariables,
): PreparedExecution {
  // Effective retry is resolved once, at creation, and stored on the row (000 "retry").
  const retry = resolveEffectiveRetry(step, runbook.retry);
  const base = {
    stepName: step.name,
    stepIndex,
    workerId: step.workerId,
    isPollStep: step.poll !== undefined,
    pollIntervalSec: step.poll?.intervalSeconds ?? null,
    pollTimeoutSec: step.poll?.timeoutSeconds ?? null,
    onFailure: step.onFailure ?? null,
    maxRetries: retry?.maxRetries ?? 0,
    retryIntervalSec: retry?.intervalSeconds ?? null,
    timeoutSec: step.timeoutSeconds ?? null,
  };
  // A for_each step's `{{item}}` is set per value when the step is expanded at its turn, never
  // from a column that happens to share the name: left for dispatch to resolve.
  const resolved = resolveStepPartially(
    step,
    step.forEach === undefined ? variables : withoutItem(variables),
  );
  if (resolved.missing.length === 0) {
    return {
      ...base,
      functionName: resolved.functionName,
      paramsJson: resolved.params,
      paramsResolved: true,
    };
  }
  // Keep the templates: a variable may be a worker output of an earlier step that does not
  // exist yet. Dispatch resolves again and fails the step (template.unresolved) if still missing.
  return { ...base, functionName: step.function, paramsJson: step.params, paramsResolved: false };
}

function withoutItem(variables: TemplateVariables): TemplateVariables {
  if (!Object.hasOwn(variables, FOR_EACH_ITEM_VARIABLE)) return variables;
  const { [FOR_EACH_ITEM_VARIABLE]: _item, ...rest } = variables;
  return rest;
}

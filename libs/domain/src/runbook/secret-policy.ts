import { templateVariablesIn } from "../templates/syntax.ts";
import { isSecretName, MASKED, maskSecretParams } from "./mask-secrets.ts";
import { setOwn } from "./set-own.ts";
import type { RunbookDefinition, StepDefinition } from "./model.ts";
import { SecretValues } from "./secret-values.ts";

/**
 * What a runbook says is secret, for masking read models (issue 25): the one place the plan, the
 * admin API's reads and the logs ask. Built from every version a batch may have run (masking with
 * all of them only ever hides more). Secret variables (data columns and worker outputs) are:
 * names that look secret ({@link isSecretName}), columns marked `secret_columns`, and every
 * variable a secret param's template uses (`Password: "{{EmployeeId}}"` makes EmployeeId's value
 * a secret). The primary key never is: it is the member key every read shows.
 *
 * A value written literally in the runbook under a secret param is masked in params, not looked
 * for elsewhere: the runbook itself is readable by every role, so a secret never belongs in it
 * (reference a column, or let the worker read it from Key Vault).
 */
export interface SecretPolicy {
  isSecretVariable(name: string): boolean;
  /** A step execution's params as a read shows them (by step name: every definition of it). */
  maskParams(stepName: string, params: Readonly<Record<string, unknown>>): Record<string, unknown>;
}

export function secretPolicyOf(runbooks: readonly RunbookDefinition[]): SecretPolicy {
  const primaryKeys = new Set(runbooks.map((runbook) => runbook.dataSource.primaryKey));
  const marked = new Set(runbooks.flatMap((runbook) => runbook.dataSource.secretColumns ?? []));
  const usedBySecrets = new Set<string>();
  const stepsByName = new Map<string, StepDefinition[]>();
  for (const step of runbooks.flatMap(allSteps)) {
    stepsByName.set(step.name, [...(stepsByName.get(step.name) ?? []), step]);
    const secretParams = new Set(step.secretParams ?? []);
    for (const [name, value] of Object.entries(step.params)) {
      collectSecretUses(value, isSecretName(name) || secretParams.has(name), usedBySecrets);
    }
  }
  const isSecretVariable = (name: string) =>
    !primaryKeys.has(name) && (isSecretName(name) || marked.has(name) || usedBySecrets.has(name));
  return {
    isSecretVariable,
    maskParams: (stepName, params) => {
      const steps = stepsByName.get(stepName) ?? [];
      // A step the runbook does not (or no longer) have still gets the name list.
      if (steps.length === 0) return maskSecretParams(params, {}, { isSecretVariable });
      return steps.reduce<Record<string, unknown>>(
        (masked, step) =>
          maskSecretParams(masked, step.params, { isSecretVariable, secretParams: step.secretParams ?? [] }),
        params,
      );
    },
  };
}

/**
 * The known secret values of one member: its secret columns and secret worker outputs. Masking
 * a read with them hides a secret whatever it is filed under.
 */
export function memberSecretValues(
  policy: SecretPolicy,
  member: {
    readonly dataJson: Readonly<Record<string, unknown>>;
    readonly workerDataJson: Readonly<Record<string, unknown>>;
  },
): SecretValues {
  const secretEntries = [member.dataJson, member.workerDataJson].flatMap((data) =>
    Object.entries(data).filter(([name]) => policy.isSecretVariable(name)),
  );
  return SecretValues.of(secretEntries.map(([, value]) => value));
}

/** A member's data (or worker data) as a read shows it: secret variables `***`, known values masked. */
export function maskMemberData(
  policy: SecretPolicy,
  secrets: SecretValues,
  data: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const masked: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(data)) {
    // The primary key's name may look secret (`UserKey`) and stays shown: the name list applies
    // only below the top level, where no column name is.
    setOwn(masked, name, policy.isSecretVariable(name) ? MASKED : secrets.mask(value));
  }
  return masked;
}

function allSteps(runbook: RunbookDefinition): StepDefinition[] {
  return [
    ...runbook.init,
    ...runbook.phases.flatMap((phase) => phase.steps),
    ...runbook.onMemberRemoved,
    ...Object.values(runbook.rollbacks).flat(),
  ];
}

/** The variables used by the templates under a secret param (`secret`), at any depth. */
function collectSecretUses(value: unknown, secret: boolean, variables: Set<string>): void {
  if (secret && typeof value === "string") {
    for (const name of templateVariablesIn(value)) variables.add(name);
  } else if (Array.isArray(value)) {
    for (const item of value) collectSecretUses(item, secret, variables);
  } else if (value !== null && typeof value === "object") {
    for (const [name, item] of Object.entries(value)) {
      collectSecretUses(item, secret || isSecretName(name), variables);
    }
  }
}

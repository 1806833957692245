import { resolveStepPartially } from "../templates/resolve.ts";
import { buildTemplateVariables } from "../templates/variables.ts";
import { FOR_EACH_ITEM_VARIABLE, forEachValues, type ForEachProblem } from "./for-each.ts";
import { maskSecretParams } from "./mask-secrets.ts";
import type { ForEachClause, RunbookDefinition, StepDefinition, WhenClause } from "./model.ts";
import { decideWhen, type WhenDecision } from "./plan-conditions.ts";
import { memberSecretValues, secretPolicyOf, type SecretPolicy } from "./secret-policy.ts";
import { SecretValues } from "./secret-values.ts";

/**
 * The dry-run plan of a runbook (issue 12, POST /api/runbooks/{name}/plan): for a member (or the
 * batch, for init steps), each step as the orchestrator would prepare it, without a batch or
 * anything written. Templates resolve with the orchestrator's own code (resolveStepPartially, which
 * prepareStepExecution uses) from the same variables (buildTemplateVariables). Two kinds of names
 * cannot resolve in a plan yet are not mistakes, so they are reported apart as "resolved at run
 * time" and left as written: `{{_batch_id}}` (no batch exists yet) and the output_params of the
 * member's earlier steps (worker outputs; at run time they also take precedence over a data
 * column of the same name, so such a name is left for run time even when the data has it).
 */
export interface PlannedStep {
  readonly step: string;
  readonly workerId: string;
  /** Resolved where it can be; a name left for run time keeps its `{{template}}`. */
  readonly functionName: string;
  /** Resolved the same way, with secret values masked (secret-policy.ts, as every read model). */
  readonly params: Record<string, unknown>;
  /** Variables the orchestrator would not find: the step would fail with template.unresolved. */
  readonly unresolved: readonly string[];
  /** `_batch_id` and worker outputs of earlier steps: known only once the batch runs. */
  readonly resolvedAtRunTime: readonly string[];
  /** The step's own `when:` as written (issue 30); null when it has none. */
  readonly when: string | null;
  /** Whether it runs for this member, with its phase's `when:` (plan-conditions.ts). */
  readonly whenDecision: WhenDecision;
  /** Its `for_each:` (issue 30) and what it expands to for this member; null when it has none. */
  readonly forEach: PlannedForEach | null;
}

/** A for_each step's expansion in the plan. */
export interface PlannedForEach {
  /** As written (`"{{Groups}}"`). */
  readonly expression: string;
  /** Executions for the member (0: the step is skipped); null when the list is an earlier step's output. */
  readonly values: number | null;
  /** The reason code the member would fail with (for_each.too_many, for_each.not_a_list); else null. */
  readonly problem: ForEachProblem | null;
}

export interface PlannedPhase {
  readonly phase: string;
  /** batch start − offset, as the scheduler stamps it; null for a manual batch (advanced by hand). */
  readonly dueAt: Date | null;
  /** The phase's `when:` as written, decided with each of its steps; null when it has none. */
  readonly when: string | null;
  readonly steps: readonly PlannedStep[];
}

export interface RunbookPlanner {
  /** The init steps of a batch starting at `batchStartTime` (null: manual). */
  init(batchStartTime: Date | null): PlannedStep[];
  /** Every phase of one member with the given data, in runbook order. */
  member(memberData: Readonly<Record<string, unknown>>, batchStartTime: Date | null): PlannedPhase[];
}

/** Special variables whose value only exists once a batch does. */
const RUN_TIME_SPECIALS = ["_batch_id"] as const;

export function createRunbookPlanner(runbook: RunbookDefinition): RunbookPlanner {
  // Output names available to each step: every output_params of the steps before it, earlier
  // phases included (worker_data_json accumulates per member across phases). Init steps have
  // none: their outputs are not stored on any member.
  const outputsBefore = runbook.phases.map(() => [] as ReadonlySet<string>[]);
  const seen = new Set<string>();
  runbook.phases.forEach((phase, phaseIndex) => {
    phase.steps.forEach((step) => {
      outputsBefore[phaseIndex]!.push(new Set(seen));
      for (const name of Object.keys(step.outputParams)) seen.add(name);
    });
  });
  const none: ReadonlySet<string> = new Set();
  const policy = secretPolicyOf([runbook]);

  return {
    init: (batchStartTime) =>
      runbook.init.map((step) =>
        planStep(step, variablesOf(undefined, batchStartTime, none), none, [], {
          policy,
          values: SecretValues.none,
        }),
      ),
    member: (memberData, batchStartTime) => {
      const secrets = {
        policy,
        values: memberSecretValues(policy, { dataJson: memberData, workerDataJson: {} }),
      };
      // Built once per member for the steps no earlier step outputs to (most of them): a copy of
      // the member's data per step was most of a large plan's garbage.
      const withoutOutputs = variablesOf(memberData, batchStartTime, none);
      return runbook.phases.map((phase, phaseIndex) => ({
        phase: phase.name,
        dueAt:
          batchStartTime === null ? null : new Date(batchStartTime.getTime() - phase.offsetMinutes * 60_000),
        when: phase.when?.expression ?? null,
        steps: phase.steps.map((step, stepIndex) => {
          const later = outputsBefore[phaseIndex]![stepIndex]!;
          const variables =
            later.size === 0 ? withoutOutputs : variablesOf(memberData, batchStartTime, later);
          const clauses = [phase.when, step.when].filter((clause) => clause !== undefined);
          return planStep(step, variables, later, clauses, secrets);
        }),
      }));
    },
  };
}

/** The orchestrator's variables minus the names that only exist at run time. */
function variablesOf(
  memberData: Readonly<Record<string, unknown>> | undefined,
  batchStartTime: Date | null,
  workerOutputs: ReadonlySet<string>,
): Record<string, unknown> {
  // batchId 0 is a placeholder, deleted below with the worker outputs.
  const variables = { ...buildTemplateVariables({ memberData, batchId: 0, batchStartTime }) };
  for (const name of [...RUN_TIME_SPECIALS, ...workerOutputs]) delete variables[name];
  return variables;
}

function planStep(
  step: StepDefinition,
  variables: Readonly<Record<string, unknown>>,
  workerOutputs: ReadonlySet<string>,
  clauses: readonly WhenClause[],
  secrets: { readonly policy: SecretPolicy; readonly values: SecretValues },
): PlannedStep {
  // A for_each step's {{item}} is set per value at run time, never from a column of that name.
  const ownVariables = step.forEach === undefined ? variables : withoutItem(variables);
  const resolved = resolveStepPartially(step, ownVariables);
  const atRunTime = (name: string) =>
    (RUN_TIME_SPECIALS as readonly string[]).includes(name) ||
    workerOutputs.has(name) ||
    (step.forEach !== undefined && name === FOR_EACH_ITEM_VARIABLE);
  const whenDecision = decideWhen(clauses, variables, atRunTime);
  return {
    step: step.name,
    workerId: step.workerId,
    functionName: secrets.values.maskText(resolved.functionName),
    params: secrets.values.mask(
      maskSecretParams(resolved.params, step.params, {
        isSecretVariable: secrets.policy.isSecretVariable,
        secretParams: step.secretParams ?? [],
      }),
    ) as Record<string, unknown>,
    unresolved: resolved.missing.filter((name) => !atRunTime(name)),
    resolvedAtRunTime: resolved.missing.filter(atRunTime),
    when: step.when?.expression ?? null,
    whenDecision,
    forEach: step.forEach === undefined ? null : planForEach(step.forEach, variables, atRunTime),
  };
}

function planForEach(
  clause: ForEachClause,
  variables: Readonly<Record<string, unknown>>,
  atRunTime: (name: string) => boolean,
): PlannedForEach {
  const base = { expression: clause.expression };
  if (atRunTime(clause.name)) return { ...base, values: null, problem: null };
  const values = forEachValues(clause, variables);
  if (!values.ok) return { ...base, values: null, problem: values.error.problem };
  return { ...base, values: values.items.length, problem: null };
}

function withoutItem(variables: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>> {
  if (!Object.hasOwn(variables, FOR_EACH_ITEM_VARIABLE)) return variables;
  const { [FOR_EACH_ITEM_VARIABLE]: _item, ...rest } = variables;
  return rest;
}
